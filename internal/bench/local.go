package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"time"

	"smarth/internal/auth"
	"smarth/internal/cluster"
)

// LocalCluster starts a throw-away local cluster (real daemon processes of
// the running smarth binary, in a temporary home) for `--local` runs, and
// returns its namenode address and a function that stops it and removes
// its home.
func LocalCluster(ctx context.Context, datanodes int, blockSize int64, out io.Writer) (string, func(), error) {
	st, stop, err := StartLocal(ctx, datanodes, blockSize, out)
	if err != nil {
		return "", nil, err
	}
	return st.NameNode, stop, nil
}

// StartLocal is LocalCluster returning the cluster's state (its web
// address, auth and TLS). The cluster is secure by default: this process's
// clients find its token and CA through $SMARTH_TOKEN_FILE and
// $SMARTH_TLS_CA_FILE, set here, as a user's shell would.
func StartLocal(ctx context.Context, datanodes int, blockSize int64, out io.Writer) (*cluster.State, func(), error) {
	home, err := os.MkdirTemp("", "smarth-bench-")
	if err != nil {
		return nil, nil, err
	}
	st, err := cluster.Up(ctx, cluster.Options{
		Home: home, DataNodes: datanodes, BlockSize: blockSize,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0",
		Out: out,
	})
	if err != nil {
		os.RemoveAll(home)
		return nil, nil, err
	}
	if u, err := user.Current(); err == nil && st.Auth == auth.Secure {
		os.Setenv(cluster.EnvTokenFile, cluster.TokenFile(home, u.Username))
	}
	if st.TLS {
		os.Setenv(cluster.EnvCAFile, cluster.CAFile(home))
	}
	fmt.Fprintf(out, "local cluster in %s, namenode %s\n", home, st.NameNode)
	stop := func() {
		if _, err := cluster.Down(home, 10*time.Second); err != nil {
			fmt.Fprintf(out, "stopping the local cluster: %v\n", err)
		}
		os.RemoveAll(home)
	}
	return st, stop, nil
}
