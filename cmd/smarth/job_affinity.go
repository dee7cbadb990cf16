package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"smarth/internal/bench/workload"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
)

func newJobAffinityCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "affinity APP --input PATH [app flags] [--runs N] [--timeout D] [--json FILE]",
		Short: "Measure an app's cache affinity CA = max(1 - hot/cold, 0) on the running cluster (seed 003, Table 1)",
		Long: `Runs APP on its input cold (nothing cached) and hot (a cache directive on every
input path, waited for until ListCacheDirectives shows it fully cached), --runs
times each, interleaved, and prints the median runtimes and CA. The cluster must
run the pinned cache policy, so that nothing but the directive caches, with a
cache large enough for the whole input, e.g.
  smarth cluster up --datanodes 4 --cache-capacity 256MiB --cache-policy pinned
The directive is removed at the end.`,
		Example: `  smarth job affinity grep --input /data/text --regex 'a[a-z]+' --runs 3
  smarth job affinity aggregation --input /hive/uservisits --json agg.json
  smarth job affinity wordcount --input /data/text --reduces 2`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
				return cmd.Help()
			}
			return runAffinity(cmd, args[0], args[1:])
		},
	}
}

func runAffinity(cmd *cobra.Command, appName string, args []string) error {
	out := cmd.OutOrStdout()
	reg := mapreduce.NewRegistry(apps.AllWith(apps.Options{Out: io.Discard})...)
	app, err := reg.Lookup(appName)
	if err != nil {
		return usageErr("%v (see `smarth job apps`)", err)
	}
	fs := pflag.NewFlagSet("job affinity "+appName, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var jf jobFlags
	jf.add(fs)
	runs := fs.Int("runs", 3, "cold/hot pairs, interleaved")
	timeout := fs.Duration("timeout", 5*time.Minute, "how long to wait for the input to be fully cached")
	jsonOut := fs.String("json", "", "save the runs and CA as JSON")
	vals := map[string]*string{}
	for _, p := range app.Params() {
		if p.Name != "output" {
			vals[p.Name] = fs.String(p.Name, p.Default, p.Help)
		}
	}
	help := fs.BoolP("help", "h", false, "this help")
	if err := fs.Parse(args); err != nil {
		return usageErr("%s: %v\n%s", appName, err, fs.FlagUsages())
	}
	if *help {
		fmt.Fprintf(out, "Usage: smarth job affinity %s [flags]\n\nFlags:\n%s", appName, fs.FlagUsages())
		return nil
	}
	if fs.NArg() > 0 || *runs < 1 {
		return usageErr("%s: want flags only and --runs >= 1 (see --help)", appName)
	}
	params := map[string]string{}
	for name, v := range vals {
		if *v != "" {
			params[name] = *v
		}
	}
	if params["input"] == "" {
		return usageErr("%s: --input is required", appName)
	}
	nn := jf.nn
	if nn == "" {
		nn = cluster.DefaultNameNode()
	}
	dfs, err := newClient(client.Config{NameNode: nn})
	if err != nil {
		return fmt.Errorf("namenode %s: %w", nn, err)
	}
	defer dfs.Close()
	rm := jf.rm
	if rm == "" {
		rm = cluster.DefaultResourceManager()
	}
	tokenFile, tlsCfg, err := jobSecurity(nn)
	if err != nil {
		return err
	}
	jc, err := jobclient.New(jobclient.Config{ResourceManager: rm, FS: mapreduce.DFS(dfs), Registry: reg, TokenFile: tokenFile, TLS: tlsCfg})
	if err != nil {
		return err
	}
	defer jc.Close()
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	res, err := workload.MeasureAffinity(ctx, dfs.Namenode(), jc, reg, workload.AffinityOptions{
		App: appName, Params: params, Runs: *runs, CacheTimeout: *timeout, Out: cmd.ErrOrStderr()})
	if err != nil {
		return err
	}
	workload.PrintAffinity(out, res)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		return os.WriteFile(*jsonOut, append(b, '\n'), 0o644)
	}
	return nil
}
