package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc/status"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
)

// NNOps are the namespace operations `smarth bench nn` knows, in the order
// they run when several are asked for: each leaves what the next needs.
var NNOps = []string{"mkdir", "create", "stat", "delete"}

// NNOptions describe a namespace benchmark after Hadoop's
// NNThroughputBenchmark: N operations of each kind spread over Threads
// goroutines, each goroutine with its own client (own client name, own
// lease, own connection), as that benchmark gives each thread its own
// client name.
type NNOptions struct {
	Ops     []string // subset of NNOps; default all
	N       int      // entries per op; default 10000
	Threads int      // default 8
	Dir     string   // default /benchmarks/nn; removed at the end
	Out     io.Writer
}

// NNOpResult is one operation's throughput.
type NNOpResult struct {
	Op        string  `json:"op"`
	N         int     `json:"n"`
	Threads   int     `json:"threads"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_s"`
}

// NNResult is what `smarth bench nn` prints and saves.
type NNResult struct {
	Time     time.Time    `json:"time"`
	NameNode string       `json:"namenode"`
	Ops      []NNOpResult `json:"ops"`
}

// NewClient makes a client; the benchmark calls it once per goroutine.
type NewClient func() (*client.FileSystem, error)

// NameNodeOps runs the namespace benchmark. Each op is timed from the
// start of the first goroutine to the end of the last. "create" is
// Create then Complete of an empty file (two RPCs, like
// NNThroughputBenchmark's create), "mkdir" one Mkdirs, "stat" one
// GetFileInfo of a created file, "delete" one non-recursive Delete of a
// created file. Every operation must succeed; the first error stops the
// run.
func NameNodeOps(ctx context.Context, newClient NewClient, opts NNOptions) (*NNResult, error) {
	if len(opts.Ops) == 0 {
		opts.Ops = NNOps
	}
	for _, op := range opts.Ops {
		if !slices.Contains(NNOps, op) {
			return nil, fmt.Errorf("unknown namespace op %q (want %v)", op, NNOps)
		}
	}
	if opts.N <= 0 {
		opts.N = 10000
	}
	if opts.Threads <= 0 {
		opts.Threads = 8
	}
	if opts.Dir == "" {
		opts.Dir = "/benchmarks/nn"
	}
	if opts.Out == nil {
		opts.Out = io.Discard
	}
	clients := make([]*client.FileSystem, opts.Threads)
	for i := range clients {
		c, err := newClient()
		if err != nil {
			return nil, err
		}
		defer c.Close()
		clients[i] = c
	}
	b := &nnBench{opts: opts, clients: clients}
	if err := b.prepare(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = clients[0].Delete(context.WithoutCancel(ctx), opts.Dir, true) }()

	res := &NNResult{Time: time.Now()}
	created := false
	for _, op := range NNOps { // canonical order, whatever the flag's order
		want := slices.Contains(opts.Ops, op)
		if (op == "stat" || op == "delete") && want && !created {
			// They need files: make them untimed.
			if _, err := b.run(ctx, "create"); err != nil {
				return res, err
			}
			created = true
		}
		if !want {
			continue
		}
		secs, err := b.run(ctx, op)
		if err != nil {
			return res, err
		}
		created = created || op == "create"
		r := NNOpResult{Op: op, N: opts.N, Threads: opts.Threads, Seconds: secs, OpsPerSec: float64(opts.N) / secs}
		res.Ops = append(res.Ops, r)
		fmt.Fprintf(opts.Out, "%-7s %6d ops  %2d threads  %7.2f s  %9.0f ops/s\n", op, r.N, r.Threads, r.Seconds, r.OpsPerSec)
	}
	return res, nil
}

type nnBench struct {
	opts    NNOptions
	clients []*client.FileSystem
}

// prepare makes a clean benchmark directory with one subdirectory per
// thread for files, so threads do not contend on one directory entry list
// more than NNThroughputBenchmark's threads do.
func (b *nnBench) prepare(ctx context.Context) error {
	c := b.clients[0]
	if err := c.Delete(ctx, b.opts.Dir, true); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for t := range b.opts.Threads {
		for _, kind := range []string{"files", "dirs"} {
			if err := c.Mkdir(ctx, fmt.Sprintf("%s/%s/t%d", b.opts.Dir, kind, t), 0o755, true); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *nnBench) file(t, i int) string { return fmt.Sprintf("%s/files/t%d/f%d", b.opts.Dir, t, i) }
func (b *nnBench) dir(t, i int) string  { return fmt.Sprintf("%s/dirs/t%d/d%d", b.opts.Dir, t, i) }

// run does N ops of one kind over the threads; thread t does entries
// t, t+T, t+2T, ...
func (b *nnBench) run(ctx context.Context, op string) (float64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		firstErr atomic.Pointer[error]
	)
	start := time.Now()
	for t, c := range b.clients {
		wg.Go(func() {
			for i := t; i < b.opts.N; i += b.opts.Threads {
				if err := b.one(ctx, c, op, t, i); err != nil {
					if firstErr.CompareAndSwap(nil, &err) {
						cancel()
					}
					return
				}
			}
		})
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if p := firstErr.Load(); p != nil {
		return 0, fmt.Errorf("bench nn %s: %w", op, *p)
	}
	return secs, nil
}

func (b *nnBench) one(ctx context.Context, c *client.FileSystem, op string, t, i int) error {
	switch op {
	case "mkdir":
		return c.Mkdir(ctx, b.dir(t, i), 0o755, false)
	case "create":
		return createEmpty(ctx, c, b.file(t, i))
	case "stat":
		_, err := c.Stat(ctx, b.file(t, i))
		return err
	case "delete":
		return c.Delete(ctx, b.file(t, i), false)
	}
	return fmt.Errorf("unknown op %q", op)
}

// createEmpty is NNThroughputBenchmark's create: Create, then Complete
// until it says the file is complete (immediately for an empty file).
func createEmpty(ctx context.Context, c *client.FileSystem, p string) error {
	nn := c.Namenode()
	r, err := nn.Create(ctx, &dfspb.CreateRequest{Path: p, Permission: 0o644, ClientName: c.ClientName(), Overwrite: true})
	if err != nil {
		return fmt.Errorf("create %s: %s", p, rpcText(err))
	}
	for range 100 {
		done, err := nn.Complete(ctx, &dfspb.CompleteRequest{Path: p, ClientName: c.ClientName(), FileId: r.GetStatus().GetFileId()})
		if err != nil {
			return fmt.Errorf("complete %s: %s", p, rpcText(err))
		}
		if done.GetCompleted() {
			return nil
		}
	}
	return fmt.Errorf("complete %s: still not complete after 100 tries", p)
}

// rpcText is the namenode's own message of an RPC error, without gRPC's
// "rpc error: code = ..." wrapping.
func rpcText(err error) string {
	if st, ok := status.FromError(err); ok {
		return st.Message()
	}
	return err.Error()
}

// PrintTable writes the ops/s table.
func (r *NNResult) PrintTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\tentries\tthreads\tseconds\tops/s\t")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.0f\t\n", o.Op, o.N, o.Threads, o.Seconds, o.OpsPerSec)
	}
	tw.Flush()
}

// WriteJSON saves the result to path.
func (r *NNResult) WriteJSON(path string) error { return writeJSON(path, r) }
