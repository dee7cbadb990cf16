package jobclient_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/rpc/mrpb"
)

// safeModeRM is a resource manager that answers every submission as one
// does while the namenode restarts: Unavailable, naming the namenode.
type safeModeRM struct {
	mrpb.UnimplementedResourceManagerServer
}

const safeModeMsg = "output directory /out: set up job job_1: mkdir /out: namenode is in safe mode: 911 of 923 blocks reported"

func (safeModeRM) SubmitJob(context.Context, *mrpb.SubmitJobRequest) (*mrpb.SubmitJobResponse, error) {
	return nil, status.Error(codes.Unavailable, safeModeMsg)
}

// Found by smarth chaos: while the namenode restarted, job submissions
// failed with "resource manager ... is not reachable", sending the
// operator to a daemon that was up and answering. An Unavailable the
// resource manager sends is reported as its answer; the control,
// TestUnreachableResourceManager, keeps "not reachable" for a resource
// manager nobody answers for.
func TestUnavailableBehindTheResourceManagerIsNotUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	mrpb.RegisterResourceManagerServer(srv, safeModeRM{})
	go srv.Serve(l)
	defer srv.Stop()

	lfs, _ := mapreduce.NewLocalFS(t.TempDir())
	os.MkdirAll(filepath.Join(lfs.Root, "in"), 0o755)
	os.WriteFile(filepath.Join(lfs.Root, "in", "x"), []byte("a\n"), 0o644)
	jc, err := jobclient.New(jobclient.Config{ResourceManager: l.Addr().String(), FS: lfs, User: "alice",
		Registry: mapreduce.NewRegistry(lineCount{}), RPCTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer jc.Close()
	_, err = jc.Run(t.Context(), "lines", map[string]string{"input": "/in", "output": "/out"})
	if err == nil || strings.Contains(err.Error(), "not reachable") || !strings.Contains(err.Error(), safeModeMsg) ||
		!strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("submission answered Unavailable by the resource manager = %v; want its message, naming it, not 'not reachable'", err)
	}
}
