package main

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/bench/suite"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/units"
)

// `smarth bench suite` joins the `smarth bench` group through bench.go's
// hook.
var _ = addBenchSubcommand(newBenchSuiteCmd)

type benchSuiteFlags struct {
	scale, phases, label, jsonOut, compare, baseDir, local string
	rm, nn                                                 string
	keep                                                   bool
	nodes, dfsioFiles, teraMaps, teraReduces, piMaps       int
	dfsioSize                                              string
	teraRows, piSamples                                    int64
}

func newBenchSuiteCmd() *cobra.Command {
	var f benchSuiteFlags
	c := &cobra.Command{
		Use:   "suite",
		Short: "Run the Hadoop benchmark suite (TestDFSIO write/read, TeraGen/TeraSort/TeraValidate, Pi) and time each phase",
		Long: `Runs seed 002's benchmark suite against the cluster through the resource
manager: TestDFSIO write and read, TeraGen, TeraSort, TeraValidate and Pi, and
prints the elapsed wall time of each phase. TeraValidate must find the output
sorted and the same row checksum TeraGen wrote, or the run fails.

Scales: small (TestDFSIO 4 x 16 MiB, TeraSort 1M rows, Pi 4 x 1M),
medium (4 x 256 MiB, 10M rows = 1 GiB, Pi 4 x 10M), large (the paper's:
10 x 1000 MiB, 30M rows = 3 GB, Pi 16 x 100M). Task counts are scaled to the
cluster (at least 2 maps and 1 reduce per node manager, a TestDFSIO file per
node); the amounts of data are not. Flags override single sizes.
Run it twice (e.g. with a host setting off and on) and compare the JSON files
with 'smarth bench suite compare'.`,
		Example: `  smarth bench suite                                  # small scale, local cluster
  smarth bench suite --scale medium --json off.json --label rpcbind-off
  smarth bench suite --scale medium --json on.json --label rpcbind-on --compare off.json
  smarth bench suite compare off.json on.json
  smarth bench suite --local /tmp/suite --scale small # in-process runner, no cluster`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBenchSuite(cmd, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.scale, "scale", "small", "sizes: "+strings.Join(suite.ScaleNames(), ", "))
	fl.StringVar(&f.phases, "phases", "", "comma-separated phases to run (default all: "+strings.Join(suite.AllPhases, ",")+")")
	fl.StringVar(&f.label, "label", "", "name of this run in comparisons (e.g. rpcbind-on)")
	fl.StringVar(&f.jsonOut, "json", "", "write the results to this JSON file")
	fl.StringVar(&f.compare, "compare", "", "after the run, compare with an earlier run's JSON file")
	fl.StringVar(&f.baseDir, "base-dir", "/benchmarks/suite", "where the suite keeps its data on the file system")
	fl.BoolVar(&f.keep, "keep", false, "keep the suite's data after the run")
	fl.StringVar(&f.local, "local", "", "run in this process over a local directory instead of on a cluster")
	fl.StringVar(&f.rm, "resourcemanager", "", "resource manager host:port (default: $SMARTH_RESOURCEMANAGER, the local cluster, 127.0.0.1:8032)")
	fl.StringVar(&f.nn, "namenode", "", "namenode host:port (default: $SMARTH_NAMENODE, the local cluster, 127.0.0.1:8020)")
	fl.IntVar(&f.nodes, "nodes", -1, "node managers to scale task counts to (default: the local cluster's, when it is the target; 0 = do not scale)")
	fl.IntVar(&f.dfsioFiles, "dfsio-files", 0, "TestDFSIO files (overrides the scale)")
	fl.StringVar(&f.dfsioSize, "dfsio-size", "", "TestDFSIO file size, e.g. 256MiB (overrides the scale)")
	fl.Int64Var(&f.teraRows, "rows", 0, "TeraGen rows of 100 bytes (overrides the scale)")
	fl.IntVar(&f.teraMaps, "maps", 0, "TeraGen map tasks (overrides the scale)")
	fl.IntVar(&f.teraReduces, "reduces", 0, "TeraSort reduce tasks (overrides the scale)")
	fl.IntVar(&f.piMaps, "pi-maps", 0, "Pi map tasks (overrides the scale)")
	fl.Int64Var(&f.piSamples, "pi-samples", 0, "Pi samples per map (overrides the scale)")
	c.AddCommand(newBenchSuiteCompareCmd())
	return c
}

// suiteOptions turns the flags into suite options.
func (f *benchSuiteFlags) options(cmd *cobra.Command) (suite.Options, error) {
	sizes, ok := suite.Scales[f.scale]
	if !ok {
		return suite.Options{}, usageErr("--scale %q: want one of %s", f.scale, strings.Join(suite.ScaleNames(), ", "))
	}
	scale := f.scale
	if n := f.clusterNodes(); n > 0 {
		sizes = sizes.ForNodes(n)
		scale += " for " + strconv.Itoa(n) + " nodes"
	}
	customized := false
	custom := func(name string) bool {
		changed := cmd.Flags().Changed(name)
		customized = customized || changed
		return changed
	}
	if custom("dfsio-files") {
		sizes.DFSIOFiles = f.dfsioFiles
	}
	if custom("dfsio-size") {
		n, err := units.ParseSize(f.dfsioSize)
		if err != nil {
			return suite.Options{}, usageErr("--dfsio-size: %v", err)
		}
		sizes.DFSIOFileSize = n
	}
	if custom("rows") {
		sizes.TeraRows = f.teraRows
	}
	if custom("maps") {
		sizes.TeraMaps = f.teraMaps
	}
	if custom("reduces") {
		sizes.TeraReduces = f.teraReduces
	}
	if custom("pi-maps") {
		sizes.PiMaps = f.piMaps
	}
	if custom("pi-samples") {
		sizes.PiSamples = f.piSamples
	}
	if customized {
		scale += ", custom"
	}
	if err := sizes.Validate(); err != nil {
		return suite.Options{}, usageErr("%v", err)
	}
	var phases []string
	if f.phases != "" {
		for _, p := range strings.Split(f.phases, ",") {
			phases = append(phases, strings.TrimSpace(p))
		}
	}
	return suite.Options{Sizes: sizes, Scale: scale, Label: f.label, Phases: phases, BaseDir: f.baseDir,
		Keep: f.keep, Log: cmd.ErrOrStderr()}, nil
}

// clusterNodes is --nodes, or the number of node managers of the local
// cluster when the suite runs against it.
func (f *benchSuiteFlags) clusterNodes() int {
	if f.nodes >= 0 || f.local != "" {
		return max(f.nodes, 0)
	}
	st, err := cluster.LoadState(cluster.Home())
	if err != nil || (f.rm != "" && f.rm != st.ResourceManager) || cluster.DefaultResourceManager() != st.ResourceManager {
		return 0
	}
	n := 0
	for _, d := range st.Daemons {
		if strings.HasPrefix(d.Name, "nm") {
			n++
		}
	}
	return n
}

// runner connects to the cluster, or makes an in-process runner.
func (f *benchSuiteFlags) runner() (mapreduce.Runner, func(), error) {
	// Drivers' own reports (TestDFSIO, Pi) are not printed: the suite
	// prints its table.
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: &bytes.Buffer{}})...)
	if f.local != "" {
		lfs, err := mapreduce.NewLocalFS(f.local)
		if err != nil {
			return nil, nil, err
		}
		return mapreduce.NewLocalRunner(lfs, mapreduce.LocalOptions{Registry: reg}), func() {}, nil
	}
	rm, nn := f.rm, f.nn
	if rm == "" {
		rm = cluster.DefaultResourceManager()
	}
	if nn == "" {
		nn = cluster.DefaultNameNode()
	}
	dfs, err := newClient(client.Config{NameNode: nn})
	if err != nil {
		return nil, nil, fmt.Errorf("namenode %s: %w", nn, err)
	}
	tokenFile, tlsCfg, err := jobSecurity(nn)
	if err != nil {
		dfs.Close()
		return nil, nil, err
	}
	jc, err := jobclient.New(jobclient.Config{ResourceManager: rm, FS: mapreduce.DFS(dfs), Registry: reg, TokenFile: tokenFile, TLS: tlsCfg})
	if err != nil {
		dfs.Close()
		return nil, nil, err
	}
	return jc, func() { jc.Close(); dfs.Close() }, nil
}

func runBenchSuite(cmd *cobra.Command, f *benchSuiteFlags) error {
	opts, err := f.options(cmd)
	if err != nil {
		return err
	}
	var before *suite.Results
	if f.compare != "" {
		if before, err = suite.ReadJSON(f.compare); err != nil {
			return usageErr("--compare: %v", err)
		}
	}
	r, closeAll, err := f.runner()
	if err != nil {
		return err
	}
	defer closeAll()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	res, runErr := suite.Run(ctx, r, opts)
	if res == nil {
		return runErr
	}
	out := cmd.OutOrStdout()
	res.Table(out)
	if f.jsonOut != "" {
		if err := res.WriteJSON(f.jsonOut); err != nil {
			return fmt.Errorf("write %s: %w", f.jsonOut, err)
		}
		fmt.Fprintf(out, "results written to %s\n", f.jsonOut)
	}
	if before != nil {
		fmt.Fprintln(out)
		suite.PrintCompare(out, before, res)
	}
	return runErr
}

func newBenchSuiteCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "compare A.json B.json",
		Short:   "Compare two suite runs phase by phase (speedup of B over A)",
		Example: "  smarth bench suite compare rpcbind-off.json rpcbind-on.json",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("compare takes two result files (A.json B.json)")
			}
			a, err := suite.ReadJSON(args[0])
			if err != nil {
				return err
			}
			b, err := suite.ReadJSON(args[1])
			if err != nil {
				return err
			}
			suite.PrintCompare(cmd.OutOrStdout(), a, b)
			return nil
		},
	}
}
