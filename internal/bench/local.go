package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"smarth/internal/cluster"
)

// LocalCluster starts a throw-away local cluster (real daemon processes of
// the running smarth binary, in a temporary home) for `--local` runs, and
// returns its namenode address and a function that stops it and removes
// its home.
func LocalCluster(ctx context.Context, datanodes int, blockSize int64, out io.Writer) (string, func(), error) {
	home, err := os.MkdirTemp("", "smarth-bench-")
	if err != nil {
		return "", nil, err
	}
	st, err := cluster.Up(ctx, cluster.Options{
		Home: home, DataNodes: datanodes, BlockSize: blockSize,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		Out: out,
	})
	if err != nil {
		os.RemoveAll(home)
		return "", nil, err
	}
	fmt.Fprintf(out, "local cluster in %s, namenode %s\n", home, st.NameNode)
	stop := func() {
		if _, err := cluster.Down(home, 10*time.Second); err != nil {
			fmt.Fprintf(out, "stopping the local cluster: %v\n", err)
		}
		os.RemoveAll(home)
	}
	return st.NameNode, stop, nil
}
