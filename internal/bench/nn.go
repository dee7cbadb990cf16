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
var NNOps = []string{"mkdir", "create", "stat", "rename", "delete"}

// NNOptions describe a namespace benchmark after Hadoop's
// NNThroughputBenchmark: N operations of each kind spread over Threads
// goroutines, each goroutine with its own client (own client name, own
// lease), as that benchmark gives each thread its own client name. The
// clients share one connection to the namenode (internal/client shares it
// per address), as a JVM's DFSClients share one Hadoop IPC connection.
type NNOptions struct {
	Ops     []string // subset of NNOps; default all
	N       int      // entries per op; default 10000
	Threads int      // default 8
	// Rounds is how many timed rounds to run (default 1); each op's
	// figure is the median over them. A round starts from an empty
	// directory and runs every asked op in NNOps order.
	Rounds int
	// Warmup runs one untimed round first, so that connections are open,
	// caches filled and the namenode's maps grown before anything counts:
	// the comparison with HDFS is against a warmed Java client too
	// (bench/nnjava).
	Warmup bool
	Dir    string // default /benchmarks/nn; removed at the end
	Out    io.Writer
}

// NNOpResult is one operation's throughput: the median round, and every
// round's ops/s so that the spread is on record.
type NNOpResult struct {
	Op        string    `json:"op"`
	N         int       `json:"n"`
	Threads   int       `json:"threads"`
	Seconds   float64   `json:"seconds"`   // of the median round
	OpsPerSec float64   `json:"ops_per_s"` // median over rounds
	Rounds    []float64 `json:"rounds_ops_per_s,omitempty"`
}

// NNResult is what `smarth bench nn` prints and saves.
type NNResult struct {
	Time     time.Time    `json:"time"`
	NameNode string       `json:"namenode"`
	Ops      []NNOpResult `json:"ops"`
}

// NewClient makes a client; the benchmark calls it once per goroutine.
type NewClient func() (*client.FileSystem, error)

func (o *NNOptions) setDefaults() error {
	if len(o.Ops) == 0 {
		o.Ops = NNOps
	}
	for _, op := range o.Ops {
		if !slices.Contains(NNOps, op) {
			return fmt.Errorf("unknown namespace op %q (want %v)", op, NNOps)
		}
	}
	if o.N <= 0 {
		o.N = 10000
	}
	if o.Threads <= 0 {
		o.Threads = 8
	}
	if o.Rounds <= 0 {
		o.Rounds = 1
	}
	if o.Dir == "" {
		o.Dir = "/benchmarks/nn"
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return nil
}

// NameNodeOps runs the namespace benchmark. Each op is timed from the
// start of the first goroutine to the end of the last. "create" is
// Create then Complete of an empty file (two RPCs, like
// NNThroughputBenchmark's create), "mkdir" one Mkdirs, "stat" one
// GetFileInfo of a created file, "rename" one Rename of a created file
// within its directory, "delete" one non-recursive Delete of a created
// file. Every operation must succeed; the first error stops the run.
func NameNodeOps(ctx context.Context, newClient NewClient, opts NNOptions) (*NNResult, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
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
	defer func() { _ = clients[0].Delete(context.WithoutCancel(ctx), opts.Dir, true) }()

	if opts.Warmup {
		if _, err := b.round(ctx, "warmup"); err != nil {
			return nil, err
		}
	}
	rounds := make(map[string][]float64) // op -> seconds per round
	for r := range opts.Rounds {
		secs, err := b.round(ctx, fmt.Sprintf("round %d", r+1))
		if err != nil {
			return nil, err
		}
		for op, s := range secs {
			rounds[op] = append(rounds[op], s)
		}
	}
	res := &NNResult{Time: time.Now()}
	for _, op := range NNOps {
		if secs, ok := rounds[op]; ok {
			res.Ops = append(res.Ops, medianOp(op, opts, secs))
		}
	}
	return res, nil
}

// medianOp summarizes one op's rounds by the median round, which one
// disturbed round (another process on the machine's two cores) cannot
// move the way it moves a mean.
func medianOp(op string, opts NNOptions, secs []float64) NNOpResult {
	r := NNOpResult{Op: op, N: opts.N, Threads: opts.Threads}
	for _, s := range secs {
		r.Rounds = append(r.Rounds, float64(opts.N)/s)
	}
	sorted := slices.Clone(secs)
	slices.Sort(sorted)
	r.Seconds = sorted[len(sorted)/2]
	r.OpsPerSec = float64(opts.N) / r.Seconds
	return r
}

type nnBench struct {
	opts    NNOptions
	clients []*client.FileSystem
	renamed bool // the round's files carry their renamed names
}

// round runs every asked op once from a clean directory and returns each
// op's seconds, printing one line per op labelled with the round.
func (b *nnBench) round(ctx context.Context, label string) (map[string]float64, error) {
	if err := b.prepare(ctx); err != nil {
		return nil, err
	}
	needFiles := slices.ContainsFunc(b.opts.Ops, func(op string) bool { return op == "stat" || op == "rename" || op == "delete" })
	out := map[string]float64{}
	for _, op := range NNOps { // canonical order, whatever the flag's order
		want := slices.Contains(b.opts.Ops, op)
		if op == "create" && !want && needFiles {
			// Later ops need files: make them untimed.
			if _, err := b.run(ctx, "create"); err != nil {
				return nil, err
			}
			continue
		}
		if !want {
			continue
		}
		secs, err := b.run(ctx, op)
		if err != nil {
			return nil, err
		}
		out[op] = secs
		fmt.Fprintf(b.opts.Out, "%-8s %-7s %6d ops  %2d threads  %7.2f s  %9.0f ops/s\n", label, op, b.opts.N, b.opts.Threads, secs, float64(b.opts.N)/secs)
	}
	return out, nil
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
	b.renamed = false
	return nil
}

func (b *nnBench) file(t, i int) string {
	if b.renamed {
		return fmt.Sprintf("%s/files/t%d/r%d", b.opts.Dir, t, i)
	}
	return fmt.Sprintf("%s/files/t%d/f%d", b.opts.Dir, t, i)
}

func (b *nnBench) renamedFile(t, i int) string {
	return fmt.Sprintf("%s/files/t%d/r%d", b.opts.Dir, t, i)
}

func (b *nnBench) dir(t, i int) string { return fmt.Sprintf("%s/dirs/t%d/d%d", b.opts.Dir, t, i) }

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
	if op == "rename" {
		b.renamed = true
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
	case "rename":
		return c.Rename(ctx, b.file(t, i), b.renamedFile(t, i))
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
	fmt.Fprintln(tw, "op\tentries\tthreads\tseconds\tops/s (median)\trounds\t")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f\t%.0f\t%d\t\n", o.Op, o.N, o.Threads, o.Seconds, o.OpsPerSec, len(o.Rounds))
	}
	tw.Flush()
}

// WriteJSON saves the result to path.
func (r *NNResult) WriteJSON(path string) error { return writeJSON(path, r) }
