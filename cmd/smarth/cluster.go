package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/cluster"
	"smarth/internal/daemonconf"
	"smarth/internal/units"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newClusterCmd()} })

func newClusterCmd() *cobra.Command {
	c := &cobra.Command{
		Use:   "cluster",
		Short: "Start, inspect and stop a local cluster of smarth daemons on loopback",
		Long: `A local cluster runs each daemon as its own process on 127.0.0.1: one namenode
(or, with --namenodes 3 or 5, an HA group nn1..nnN of which one is active),
N datanodes (hostnames dn1..dnN) and, with --nodemanagers, a resource manager and
one node manager per datanode host. Configs, logs, data and the state file
cluster.json live under the cluster home: --home, else $SMARTH_HOME, else ./.smarth.
Other commands (smarth fs, smarth job, smarth bench) find the namenode through
that state file when --namenode and $SMARTH_NAMENODE are not given.`,
		Example: `  smarth cluster up --datanodes 3
  smarth cluster status
  smarth fs ls /
  smarth cluster restart dn2
  smarth cluster down`,
	}
	c.AddCommand(newClusterUpCmd(), newClusterDownCmd(), newClusterStatusCmd(),
		newClusterDaemonCmd("start"), newClusterDaemonCmd("stop"), newClusterDaemonCmd("restart"))
	return c
}

// rootHasCommand reports whether this smarth binary has a top-level command,
// so that the MapReduce daemons are started only once they exist.
func rootHasCommand(cmd *cobra.Command, name string) bool {
	for _, c := range cmd.Root().Commands() {
		if c.Name() == name {
			return true
		}
	}
	return false
}

func newClusterUpCmd() *cobra.Command {
	var (
		opts           cluster.Options
		racks          string
		nodeManagers   string
		blockSize      string
		placement      string
		cache          clusterCacheFlags
		nnConf         []string
		timeout, grace time.Duration
	)
	c := &cobra.Command{
		Use:   "up",
		Short: "Start a local cluster (or the missing daemons of one) and return once it is ready",
		Long: `Starts a local cluster in the cluster home and returns once every daemon is ready
and every datanode registered. If the home's cluster partly runs (a daemon
crashed or was stopped), only its missing daemons are started, with the configs
they ran with; the flags that describe a new cluster are then ignored.`,
		Example: `  smarth cluster up
  smarth cluster up --namenodes 3
  smarth cluster up --datanodes 5 --racks /r1,/r1,/r2,/r2,/r2
  smarth cluster up --home /tmp/c1 --nodemanagers=false --block-size 8MiB
  smarth cluster up --datanodes 4 --cache-capacity 256MiB --cache-policy bg --scheduler cachelocal
  sudo smarth cluster up --cache-capacity 256MiB --cache-policy pinned --disk-read-rate 40MB/s
  smarth cluster up --tls
  smarth cluster up --auth simple --nodemanagers=false
  smarth cluster up --namenode-conf block_access_token_enable=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if racks != "" {
				opts.Racks = strings.Split(racks, ",")
			}
			switch nodeManagers {
			case "auto":
				opts.NodeManagers = rootHasCommand(cmd, "resourcemanager") && rootHasCommand(cmd, "nodemanager")
			case "true":
				if !rootHasCommand(cmd, "resourcemanager") || !rootHasCommand(cmd, "nodemanager") {
					return fmt.Errorf("this smarth binary has no resourcemanager/nodemanager commands yet")
				}
				opts.NodeManagers = true
			case "false":
			default:
				return usageErr("--nodemanagers must be auto, true or false, not %q", nodeManagers)
			}
			if err := checkResourceManagerHTTP(opts); err != nil {
				return err
			}
			if blockSize != "" {
				n, err := units.ParseSize(blockSize)
				if err != nil {
					return usageErr("--block-size: %v", err)
				}
				opts.BlockSize = n
			}
			opts.NameNode = map[string]any{}
			if placement != "" {
				opts.NameNode["placement"] = placement
			}
			if err := parseConfPairs(nnConf, opts.NameNode); err != nil {
				return usageErr("--namenode-conf: %v", err)
			}
			// A misspelt key is the flag's fault: said as such, before
			// the launcher would refuse it too.
			if err := daemonconf.Check(daemonconf.NameNode, opts.NameNode); err != nil {
				return usageErr("--namenode-conf: %v", err)
			}
			if !cmd.Flags().Changed("namenodes") {
				opts.NameNodes = 0 // a new cluster's one, or whatever the home's has
			}
			if opts.NameNodes > 1 && cmd.Flags().Changed("tls") && !opts.TLS {
				return usageErr("--namenodes %d needs TLS: the HA group's members speak mutual TLS (drop --tls=false)", opts.NameNodes)
			}
			if opts.DataNodes < 1 {
				return usageErr("--datanodes must be at least 1")
			}
			if err := cache.apply(cmd, &opts.Cache); err != nil {
				return err
			}
			opts.ReadyTimeout, opts.StopGrace = timeout, grace
			opts.Detach = true
			opts.Out = cmd.OutOrStdout()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			st, err := cluster.Up(ctx, opts)
			switch {
			case errors.Is(err, cluster.ErrRunning) && st != nil:
				// Up is idempotent, as `systemctl start` is: a script
				// that runs it twice must not fail the second time.
				fmt.Fprintf(cmd.OutOrStdout(), "cluster already up in %s (every daemon runs; nothing started)\n", st.Home)
			case err != nil:
				return err
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "\ncluster up in %s\n", st.Home)
			}
			if st.HA() {
				fmt.Fprintf(cmd.OutOrStdout(), "  namenodes %s (an HA group; clients fail over across them)   nn1 web UI %s://%s/\n", st.NameNode, st.WebScheme(), st.NameNodeHTTP)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "  namenode %s   web UI %s://%s/\n", st.NameNode, st.WebScheme(), st.NameNodeHTTP)
			}
			if st.ResourceManager != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "  resource manager %s\n", st.ResourceManager)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "  logs in %s/logs; stop with: smarth cluster down%s\n", st.Home, clusterHomeFlag(cmd, st.Home))
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Home, "home", "", "cluster home (default $SMARTH_HOME, else ./.smarth)")
	f.IntVar(&opts.NameNodes, "namenodes", 1, "number of namenodes: 1, or an HA group of 3 or 5 (nn1..nnN, with TLS) that clients fail over across")
	f.IntVar(&opts.DataNodes, "datanodes", 3, "number of datanodes (hostnames dn1..dnN)")
	f.StringVar(&racks, "racks", "", "comma-separated rack of each datanode (default alternating /rack-a,/rack-b)")
	f.StringVar(&nodeManagers, "nodemanagers", "auto", "also start a resource manager and a node manager per datanode: auto (when this binary has them), true, false")
	f.Lookup("nodemanagers").NoOptDefVal = "true" // a bare --nodemanagers means true
	f.IntVar(&opts.Replication, "replication", 0, "default replication (default min(3, datanodes))")
	f.StringVar(&blockSize, "block-size", "", "default block size, e.g. 64MiB (default: the namenode's)")
	f.StringVar(&placement, "placement", "", "namenode placement policy: rackaware, speedaware, speedaware-paper or mincut")
	f.StringVar(&opts.Auth, "auth", "secure", "auth: secure (the cluster's keys under HOME/keys, your token in HOME/tokens) or simple (the namenode trusts asserted user names; trusted networks only)")
	f.BoolVar(&opts.TLS, "tls", false, "TLS on every RPC, data-transfer, shuffle and HTTP connection, with a CA and per-daemon certificates made under HOME/tls")
	f.StringArrayVar(&nnConf, "namenode-conf", nil, "extra namenode config KEY=VALUE (YAML value; repeatable), e.g. block_access_token_enable=false")
	cache.add(f)
	f.StringVar(&opts.NameNodeRPC, "namenode-addr", "", "namenode RPC address (default 127.0.0.1:8020 if free, else a free port)")
	f.StringVar(&opts.NameNodeHTTP, "namenode-http", "", "namenode web address (default 127.0.0.1:9870 if free, else a free port)")
	f.StringVar(&opts.ResourceManagerHTTP, "resourcemanager-http", "", "resource manager web address, with node managers (default 127.0.0.1:8088 if free, else a free port)")
	f.StringVar(&opts.Binary, "binary", "", "smarth binary the daemons run (default: this one)")
	f.DurationVar(&timeout, "timeout", 60*time.Second, "how long to wait for each start-up step")
	f.DurationVar(&grace, "grace", 10*time.Second, "on failure: SIGTERM to SIGKILL grace when stopping what was started")
	return c
}

// checkResourceManagerHTTP refuses a --resourcemanager-http that is not
// host:port, or given for a cluster without a resource manager (it would
// be dropped without a word).
func checkResourceManagerHTTP(opts cluster.Options) error {
	addr := opts.ResourceManagerHTTP
	if addr == "" {
		return nil
	}
	if !opts.NodeManagers {
		return usageErr("--resourcemanager-http %s: this cluster starts no resource manager (--nodemanagers is false)", addr)
	}
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" {
		return usageErr("--resourcemanager-http %q: want host:port, e.g. 127.0.0.1:8088", addr)
	}
	return nil
}

// homeFlag repeats --home in printed advice when it was given.
func clusterHomeFlag(cmd *cobra.Command, home string) string {
	if cmd.Flags().Changed("home") {
		return " --home " + home
	}
	return ""
}

func newClusterDownCmd() *cobra.Command {
	var (
		home  string
		grace time.Duration
		purge bool
	)
	c := &cobra.Command{
		Use:   "down",
		Short: "Stop every daemon of the local cluster (by pid; data is kept)",
		Example: `  smarth cluster down
  smarth cluster down --home /tmp/c1 --purge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if home == "" {
				home = cluster.Home()
			}
			lines, err := cluster.Down(home, grace)
			for _, l := range lines {
				fmt.Fprintln(cmd.OutOrStdout(), l)
			}
			if err != nil {
				return err
			}
			if purge {
				if err := cluster.Purge(home); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed %s\n", home)
			}
			return nil
		},
	}
	c.Flags().StringVar(&home, "home", "", "cluster home (default $SMARTH_HOME, else ./.smarth)")
	c.Flags().DurationVar(&grace, "grace", 10*time.Second, "time between SIGTERM and SIGKILL")
	c.Flags().BoolVar(&purge, "purge", false, "also delete the cluster home: data, logs, configs")
	return c
}

func newClusterStatusCmd() *cobra.Command {
	var home string
	c := &cobra.Command{
		Use:     "status",
		Short:   "Show each daemon of the local cluster (pid, alive, addresses), each namenode's HA role, and the datanode report",
		Example: `  smarth cluster status`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if home == "" {
				home = cluster.Home()
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 10*time.Second)
			defer cancel()
			s, err := cluster.GetStatus(ctx, home)
			if err != nil {
				return err
			}
			s.Print(cmd.OutOrStdout())
			return nil
		},
	}
	c.Flags().StringVar(&home, "home", "", "cluster home (default $SMARTH_HOME, else ./.smarth)")
	return c
}

// newClusterDaemonCmd is `smarth cluster start|stop|restart NAME`: one
// daemon, as `hdfs --daemon start|stop` handles one.
func newClusterDaemonCmd(verb string) *cobra.Command {
	var opts cluster.ControlOptions
	short := map[string]string{
		"start":   "Start one stopped daemon of the local cluster with its recorded config and data",
		"stop":    "Stop one daemon of the local cluster by pid (data kept)",
		"restart": "Stop one daemon of the local cluster if it runs, then start it again",
	}[verb]
	c := &cobra.Command{
		Use:   verb + " NAME",
		Short: short,
		Long: short + `.
NAME is a daemon as ` + "`smarth cluster status`" + ` lists it: namenode (or nn; nn1..nnN in an HA group), dn1..dnN,
resourcemanager (or rm), nm1..nmN. A started namenode or resource manager comes
back on the address it had, so the daemons still running find it; a started
datanode counts as ready once the namenode lists it as live again.`,
		Example: "  smarth cluster " + verb + " dn2\n  smarth cluster " + verb + " nn --home /tmp/c1",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Out = cmd.OutOrStdout()
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var lines []string
			var err error
			switch verb {
			case "start":
				_, err = cluster.Start(ctx, args[0], opts)
			case "stop":
				var line string
				line, err = cluster.Stop(args[0], opts)
				lines = []string{line}
			case "restart":
				_, lines, err = cluster.Restart(ctx, args[0], opts)
			}
			for _, l := range lines {
				if l != "" {
					fmt.Fprintln(cmd.OutOrStdout(), l)
				}
			}
			return err
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Home, "home", "", "cluster home (default $SMARTH_HOME, else ./.smarth)")
	if verb != "stop" {
		f.DurationVar(&opts.ReadyTimeout, "timeout", 60*time.Second, "how long to wait for the daemon to be ready")
	}
	if verb != "start" {
		f.DurationVar(&opts.StopGrace, "grace", 10*time.Second, "time between SIGTERM and SIGKILL")
	}
	return c
}
