package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"smarth/internal/bench"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/heapfloor"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newBenchCmd()} })

// benchSubcommands are `smarth bench` subcommands defined in other files
// (the MapReduce suite in bench_suite.go registers `smarth bench suite`
// with `var _ = addBenchSubcommand(newBenchSuiteCmd)`), so this file need
// not name them and builds whether or not they exist yet.
var benchSubcommands []func() *cobra.Command

func addBenchSubcommand(f func() *cobra.Command) bool {
	benchSubcommands = append(benchSubcommands, f)
	return true
}

func newBenchCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "bench",
		Short: "Measure the file system (put/get throughput, namespace ops/s) and run benchmark suites",
		Example: `  smarth bench put --size 1GiB --replication 3 --runs 3
  smarth bench put --mode classic,multipipeline --runs 5 --link-rate 100Mbit --plot put.svg
  smarth bench get --runs 3
  smarth bench nn --ops create,mkdir,stat,rename,delete --n 10000 --threads 8 --rounds 5`,
	}
	c.AddCommand(newBenchPutCmd(), newBenchGetCmd(), newBenchNNCmd())
	for _, f := range benchSubcommands {
		c.AddCommand(f())
	}
	return c
}

// benchTarget holds the flags every DFS benchmark shares: where the
// namenode is, or --local to start a throw-away cluster.
type benchTarget struct {
	namenode   string
	user       string
	local      bool
	datanodes  int
	cpuProfile string
}

func (b *benchTarget) flags(c *cobra.Command) {
	c.Flags().StringVar(&b.namenode, "namenode", "", "namenode host:port (default $SMARTH_NAMENODE, the local cluster's, else 127.0.0.1:8020)")
	c.Flags().StringVar(&b.user, "user", "", "user name (default: the OS user)")
	c.Flags().BoolVar(&b.local, "local", false, "start a throw-away local cluster for this run and stop it after")
	c.Flags().IntVar(&b.datanodes, "datanodes", 3, "datanodes of the --local cluster")
	c.Flags().StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of this client process to this file")
}

// profile starts the CPU profile if one was asked for and returns the
// function that stops it.
func (b *benchTarget) profile() (func(), error) {
	if b.cpuProfile == "" {
		return func() {}, nil
	}
	f, err := os.Create(b.cpuProfile)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// connect returns the namenode address (starting a --local cluster if
// asked) and a function to call when done.
func (b *benchTarget) connect(ctx context.Context, cmd *cobra.Command, blockSize int64) (string, func(), error) {
	if b.local {
		if b.namenode != "" {
			return "", nil, usageErr("--local and --namenode exclude each other")
		}
		return bench.LocalCluster(ctx, b.datanodes, blockSize, cmd.ErrOrStderr())
	}
	if b.namenode == "" {
		b.namenode = cluster.DefaultNameNode()
	}
	return b.namenode, func() {}, nil
}

func (b *benchTarget) client(addr string) (*client.FileSystem, error) {
	return newClient(client.Config{NameNode: addr, User: b.user})
}

func cancelOnSignal(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
}

// runDFS runs one file-system benchmark: it connects (starting a --local
// cluster if asked), runs it under the CPU profile if one was asked for,
// prints its table and writes the JSON and plot files.
func (b *benchTarget) runDFS(cmd *cobra.Command, blockSize int64, jsonPath, plotPath string, run func(context.Context, *client.FileSystem) (*bench.Result, error)) error {
	ctx, stop := cancelOnSignal(cmd)
	defer stop()
	addr, done, err := b.connect(ctx, cmd, blockSize)
	if err != nil {
		return err
	}
	defer done()
	fsys, err := b.client(addr)
	if err != nil {
		return err
	}
	defer fsys.Close()
	stopProfile, err := b.profile()
	if err != nil {
		return err
	}
	res, err := run(ctx, fsys)
	stopProfile()
	if err != nil {
		return err
	}
	res.NameNode = addr
	fmt.Fprintln(cmd.OutOrStdout())
	res.PrintTable(cmd.OutOrStdout())
	return saveBenchOutputs(cmd, res, jsonPath, plotPath)
}

// saveBenchOutputs writes the JSON and plot files a run asked for.
func saveBenchOutputs(cmd *cobra.Command, res *bench.Result, jsonPath, plotPath string) error {
	if jsonPath != "" {
		if err := res.WriteJSON(jsonPath); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "result written to %s\n", jsonPath)
	}
	if plotPath != "" {
		if err := res.Plot(plotPath); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "plot written to %s\n", plotPath)
	}
	return nil
}

// benchPutFlags are the flags of `smarth bench put` that need parsing.
type benchPutFlags struct {
	size, blockSize, modes, linkRate string
	jsonPath, plotPath               string
}

// options turns the flags into PutOptions (opts already holds the plain ones).
func (f *benchPutFlags) options(opts bench.PutOptions) (bench.PutOptions, error) {
	var err error
	if opts.Size, err = units.ParseSize(f.size); err != nil || opts.Size <= 0 {
		return opts, usageErr("--size: want a positive size such as 1GiB, got %q", f.size)
	}
	if f.blockSize != "" {
		if opts.BlockSize, err = units.ParseSize(f.blockSize); err != nil {
			return opts, usageErr("--block-size: %v", err)
		}
	}
	if strings.Trim(f.modes, " ,") != "" { // none given: Put's default, classic
		if opts.Modes, err = listFlag("--mode", f.modes, client.WriteModes()); err != nil {
			return opts, err
		}
	}
	if f.linkRate != "" {
		if opts.LinkRateBits, err = units.ParseRate(f.linkRate); err != nil {
			return opts, usageErr("--link-rate: %v", err)
		}
		if opts.LinkRateBits <= 0 {
			return opts, usageErr("--link-rate %q: want a positive rate", f.linkRate)
		}
	}
	if opts.Runs < 1 {
		return opts, usageErr("--runs must be at least 1")
	}
	return opts, nil
}

func newBenchPutCmd() *cobra.Command {
	var (
		t    benchTarget
		pf   benchPutFlags
		opts bench.PutOptions
	)
	c := &cobra.Command{
		Use:   "put",
		Short: "Time the upload of one large file generated in memory; MiB/s per write mode",
		Long: `Writes --size bytes generated in memory (no local disk read) --runs times per
write mode and times each upload from create to the completed close (client
start-up excluded). With several --mode values the modes run interleaved,
every other run in reverse (classic multipipeline, multipipeline classic, ...),
on the same cluster and the table shows each mode's improvement over classic.
--link-rate gives the client's link rate, the bound of a multi-pipeline write
(SMARTH section III.D), and the table shows how close each mode came to it.
Each upload starts after a sync; --drop-caches also empties the page cache, for
a cluster on this machine, whose uploads otherwise slow as the cache fills.`,
		Example: `  smarth bench put --size 1GiB --replication 3 --runs 3 --json put-r3.json
  smarth bench put --mode classic,multipipeline --size 512MiB --runs 5 --link-rate 100Mbit --plot put.svg
  smarth bench put --local --size 256MiB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := pf.options(opts)
			if err != nil {
				return err
			}
			opts.Out = cmd.OutOrStdout()
			return t.runDFS(cmd, opts.BlockSize, pf.jsonPath, pf.plotPath, func(ctx context.Context, fsys *client.FileSystem) (*bench.Result, error) {
				return bench.Put(ctx, fsys, opts)
			})
		},
	}
	t.flags(c)
	f := c.Flags()
	f.StringVar(&pf.size, "size", "1GiB", "bytes per file, e.g. 1GiB, 256MiB")
	f.IntVar(&opts.Replication, "replication", 3, "replication of the file (0: the namenode's default)")
	f.StringVar(&pf.blockSize, "block-size", "", "block size, e.g. 64MiB (default: the namenode's)")
	f.IntVar(&opts.Runs, "runs", 1, "runs per mode")
	f.StringVar(&pf.modes, "mode", "classic", "write modes, comma-separated: classic, multipipeline, multipipeline-paper")
	f.StringVar(&pf.linkRate, "link-rate", "", "the client's link rate (e.g. 100Mbit): the SMARTH III.D bound")
	f.StringVar(&opts.Dir, "dir", "/benchmarks/put", "directory of the benchmark files")
	f.BoolVar(&opts.KeepAll, "keep-all", false, "keep every run's file (default: only the last of each mode)")
	f.BoolVar(&opts.DropCaches, "drop-caches", false, "empty this machine's page cache before each upload (root; for a cluster on this machine)")
	f.StringVar(&pf.jsonPath, "json", "", "write the result as JSON to this file")
	f.StringVar(&pf.plotPath, "plot", "", "write a plot to this .svg or .png file")
	return c
}

func newBenchGetCmd() *cobra.Command {
	var (
		t                  benchTarget
		size               string
		jsonPath, plotPath string
		opts               bench.GetOptions
	)
	c := &cobra.Command{
		Use:   "get",
		Short: "Time the read of one large file (by default the one `bench put` wrote)",
		Long: `Reads --path (default: the classic file left by smarth bench put) --runs times
and times each read from open to the last byte. If the file does not exist it is
written first, untimed, with --size and --replication.`,
		Example: `  smarth bench put --size 1GiB --replication 3 && smarth bench get --runs 3
  smarth bench get --local --size 1GiB --replication 1 --json get-r1.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Size, err = units.ParseSize(size); err != nil {
				return usageErr("--size: %v", err)
			}
			if opts.Runs < 1 {
				return usageErr("--runs must be at least 1")
			}
			opts.Out = cmd.OutOrStdout()
			return t.runDFS(cmd, 0, jsonPath, plotPath, func(ctx context.Context, fsys *client.FileSystem) (*bench.Result, error) {
				return bench.Get(ctx, fsys, opts)
			})
		},
	}
	t.flags(c)
	f := c.Flags()
	f.StringVar(&opts.Path, "path", "", "file to read (default /benchmarks/put/classic.dat)")
	f.StringVar(&size, "size", "1GiB", "size of the file to write first when --path does not exist")
	f.IntVar(&opts.Replication, "replication", 3, "replication of the file written first")
	f.IntVar(&opts.Runs, "runs", 1, "number of reads")
	f.BoolVar(&opts.Verify, "verify", false, "check every byte against the generated content (inside the timing)")
	f.StringVar(&jsonPath, "json", "", "write the result as JSON to this file")
	f.StringVar(&plotPath, "plot", "", "write a plot to this .svg or .png file")
	return c
}

func newBenchNNCmd() *cobra.Command {
	var (
		t        benchTarget
		ops      string
		jsonPath string
		heapMin  string
		opts     bench.NNOptions
	)
	c := &cobra.Command{
		Use:   "nn",
		Short: "Namespace operations per second (mkdir/create/stat/rename/delete), like NNThroughputBenchmark",
		Long: `Runs --n operations of each kind from --threads goroutines, each with its own
client, and prints operations per second. create is create + complete of an
empty file, mkdir one mkdirs, stat one getFileInfo, rename one rename, delete
one delete. An untimed warm-up round comes first (--warmup=false skips it),
then --rounds timed rounds, each from an empty directory; the table shows
each op's median round. bench/nnjava makes the same calls against HDFS's
NameNode. The benchmark directory is removed at the end. Calls use the
client's namenode transport: IPC by default, gRPC with
SMARTH_RPC_TRANSPORT=grpc (bench/nn-transports.sh compares the two).`,
		Example: `  smarth bench nn --ops create,mkdir,stat,rename,delete --n 10000 --threads 8 --rounds 5
  smarth bench nn --ops create --n 10000 --threads 1 --json nn-1.json
  SMARTH_RPC_TRANSPORT=grpc smarth bench nn --threads 64 --n 5000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, op := range strings.Split(ops, ",") {
				if op = strings.TrimSpace(op); op != "" {
					opts.Ops = append(opts.Ops, op)
				}
			}
			for _, op := range opts.Ops {
				if !slices.Contains(bench.NNOps, op) {
					return usageErr("--ops: unknown op %q (want some of %s)", op, strings.Join(bench.NNOps, ","))
				}
			}
			if opts.N < 1 || opts.Threads < 1 || opts.Rounds < 1 {
				return usageErr("--n, --threads and --rounds must be at least 1")
			}
			ctx, stop := cancelOnSignal(cmd)
			defer stop()
			addr, done, err := t.connect(ctx, cmd, 0)
			if err != nil {
				return err
			}
			defer done()
			opts.Out = cmd.OutOrStdout()
			heap, err := units.ParseSize(heapMin)
			if err != nil || heap < 0 {
				return usageErr("--heap-min %q: want a size such as 64MiB, or 0", heapMin)
			}
			// The load generator's heap is sized as the Java client's is
			// (a JVM's default heap is a quarter of the machine's memory):
			// 64 clients' RPC garbage over a small heap otherwise costs
			// this process about a sixth of its CPU in collections, on the
			// cores the namenode under test shares.
			defer heapfloor.Keep(heap)()
			stopProfile, err := t.profile()
			if err != nil {
				return err
			}
			res, err := bench.NameNodeOps(ctx, func() (*client.FileSystem, error) { return t.client(addr) }, opts)
			stopProfile()
			if err != nil {
				return err
			}
			res.NameNode = addr
			fmt.Fprintln(cmd.OutOrStdout())
			res.PrintTable(cmd.OutOrStdout())
			if jsonPath != "" {
				if err := res.WriteJSON(jsonPath); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "result written to %s\n", jsonPath)
			}
			return nil
		},
	}
	t.flags(c)
	f := c.Flags()
	f.StringVar(&ops, "ops", strings.Join(bench.NNOps, ","), "operations, comma-separated")
	f.IntVar(&opts.N, "n", 10000, "entries per operation")
	f.IntVar(&opts.Threads, "threads", 8, "client goroutines")
	f.IntVar(&opts.Rounds, "rounds", 1, "timed rounds; each op reports its median round")
	f.BoolVar(&opts.Warmup, "warmup", true, "run one untimed round first")
	f.StringVar(&opts.Dir, "dir", "/benchmarks/nn", "benchmark directory (removed at the end)")
	f.StringVar(&jsonPath, "json", "", "write the result as JSON to this file")
	f.StringVar(&heapMin, "heap-min", "64MiB", "heap this client process grows to before collecting garbage (like a JVM's -Xms); 0: Go's default")
	return c
}
