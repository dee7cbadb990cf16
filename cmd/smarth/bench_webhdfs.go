package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"smarth/internal/auth"
	"smarth/internal/bench"
	"smarth/internal/cluster"
	"smarth/internal/units"
)

var _ = addBenchSubcommand(newBenchWebHDFSCmd)

func newBenchWebHDFSCmd() *cobra.Command {
	var (
		t                benchTarget
		size, blockSize  string
		web              string
		putJSON, getJSON string
		opts             bench.WebHDFSOptions
	)
	c := &cobra.Command{
		Use:   "webhdfs",
		Short: "Compare put and get of one large file through WebHDFS and through the native client",
		Long: `Writes and reads --size bytes through the native client (classic write) and
through WebHDFS (CREATE/OPEN redirected from the namenode to a datanode's HTTP
port), --runs rounds with the order alternating, and prints both tables with
WebHDFS's difference in the "vs classic" column. After the first round both
files must have the same checksum.`,
		Example: `  smarth bench webhdfs --local --size 1GiB --runs 3
  smarth bench webhdfs --namenode 10.0.0.1:8020 --webhdfs 10.0.0.1:9870 --size 1GiB`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if opts.Size, err = units.ParseSize(size); err != nil {
				return usageErr("--size: %v", err)
			}
			if blockSize != "" {
				if opts.BlockSize, err = units.ParseSize(blockSize); err != nil {
					return usageErr("--block-size: %v", err)
				}
			}
			if opts.Runs < 1 {
				return usageErr("--runs must be at least 1")
			}
			ctx, stop := cancelOnSignal(cmd)
			defer stop()
			var addr string
			if t.local {
				if t.namenode != "" || web != "" {
					return usageErr("--local excludes --namenode and --webhdfs")
				}
				st, done, err := bench.StartLocal(ctx, t.datanodes, opts.BlockSize, cmd.ErrOrStderr())
				if err != nil {
					return err
				}
				defer done()
				addr, web = st.NameNode, st.NameNodeHTTP
			} else {
				if t.namenode == "" {
					t.namenode = cluster.DefaultNameNode()
				}
				addr = t.namenode
				if web == "" {
					st, err := cluster.LoadState(cluster.Home())
					if err != nil || st.NameNode != addr || st.NameNodeHTTP == "" {
						return usageErr("--webhdfs: the namenode's web address is needed (it is known only for the local cluster)")
					}
					web = st.NameNodeHTTP
				}
			}
			sec, err := cluster.ClientSecurity(addr)
			if err != nil {
				return err
			}
			scheme := "http"
			if sec.TLS != nil {
				scheme, opts.TLS = "https", sec.TLS
			}
			if !strings.Contains(web, "://") {
				web = scheme + "://" + web
			}
			opts.URL = strings.TrimSuffix(web, "/")
			if cred, err := auth.LoadCredential(sec.TokenFile); err != nil {
				return err
			} else if cred != "" {
				opts.Authorization = "Bearer " + cred
			}
			fsys, err := t.client(addr)
			if err != nil {
				return err
			}
			defer fsys.Close()
			opts.User = fsys.User()
			opts.Out = cmd.OutOrStdout()
			put, get, err := bench.WebHDFS(ctx, fsys, opts)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, r := range []*bench.Result{put, get} {
				r.NameNode = addr
				fmt.Fprintln(out)
				r.PrintTable(out)
			}
			fmt.Fprintf(out, "\nWebHDFS time / native time: put %.2f, get %.2f (means)\n", ratio(put), ratio(get))
			for path, r := range map[string]*bench.Result{putJSON: put, getJSON: get} {
				if path != "" {
					if err := r.WriteJSON(path); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	t.flags(c)
	f := c.Flags()
	f.StringVar(&web, "webhdfs", "", "the namenode's web host:port (default: the local cluster's)")
	f.StringVar(&size, "size", "1GiB", "bytes per file")
	f.StringVar(&blockSize, "block-size", "", "block size (default: the namenode's)")
	f.IntVar(&opts.Replication, "replication", 0, "replication (default: the namenode's)")
	f.IntVar(&opts.Runs, "runs", 3, "rounds (each puts and gets both ways)")
	f.StringVar(&putJSON, "json-put", "", "write the put result as JSON to this file")
	f.StringVar(&getJSON, "json-get", "", "write the get result as JSON to this file")
	return c
}

// ratio is WebHDFS's mean time over the native client's.
func ratio(r *bench.Result) float64 {
	var native, web float64
	for _, s := range r.Summaries {
		switch s.Mode {
		case "classic":
			native = s.Mean
		case "webhdfs":
			web = s.Mean
		}
	}
	if native == 0 {
		return 0
	}
	return web / native
}
