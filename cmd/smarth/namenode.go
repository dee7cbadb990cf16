package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/daemonconf"
	"smarth/internal/heapfloor"
	"smarth/internal/namenode"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newNamenodeCmd()} })

func newNamenodeCmd() *cobra.Command {
	var configFile, readyFile, logFile string
	var selfRestart bool
	overrides := map[string]*string{}
	c := &cobra.Command{
		Use:   "namenode",
		Short: "Run the namenode: namespace, block map, placement, leases, re-replication",
		Long: `Run the namenode. It loads the namespace from meta_dir (a new, empty one if the
directory is empty), serves ClientProtocol and DatanodeProtocol over gRPC on
rpc_addr, and a status page and Prometheus metrics on http_addr. Every
acknowledged change is in its edit log before the reply, so kill -9 loses
nothing acknowledged. It starts in safe mode until the datanodes have
reported enough blocks. Settings come from --config (YAML; every key, its
default and meaning in docs/config.md) with flags overriding them. It stops
on SIGTERM or SIGINT.

Authentication is secure unless the config says auth: simple (or --auth
simple, which logs a warning): callers prove their user with a credential
signed by auth_secret_file (default meta_dir/auth.key) and datanodes with
datanode_key_file (default meta_dir/datanode.key); both are created 0600 at
the first start. See docs/security.md.

A member of an HA group that loses the active role with edits in memory the
group may not have (cut off or frozen while it wrote) must reload from the
group's log: it restarts itself in place (the same process id, arguments and
ready file) and rejoins as a standby; with --self-restart=false it exits with
status 1 instead, for a service manager to restart it.`,
		Example: `  smarth namenode --meta-dir /var/smarth/nn
  smarth namenode --config nn.yaml --ready-file nn.ready --log-file nn.log
  smarth namenode --config nn.yaml --rpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0
  smarth namenode --meta-dir /tmp/nn --auth simple   # trusted network only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := namenode.DefaultConfig()
			if configFile != "" {
				if err := daemonconf.Load(configFile, &cfg); err != nil {
					return usageErr("%v", err)
				}
			}
			targets := map[string]*string{
				"rpc-addr": &cfg.RPCAddr, "http-addr": &cfg.HTTPAddr, "meta-dir": &cfg.MetaDir, "placement": &cfg.Placement,
				"auth": &cfg.Auth,
			}
			for name, v := range overrides {
				if cmd.Flags().Changed(name) {
					*targets[name] = *v
				}
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("namenode: %v", err)
			}
			log, closeLog, err := daemonLogger(logFile, cfg.Log)
			if err != nil {
				return err
			}
			defer closeLog.Close()
			return runNamenode(cfg, log, readyFile, selfRestart)
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	c.Flags().StringVar(&configFile, "config", "", "YAML config file")
	c.Flags().StringVar(&readyFile, "ready-file", "", `once listening, write {"pid","rpc","http"} as JSON to this file`)
	c.Flags().StringVar(&logFile, "log-file", "", "write JSON logs to this file instead of text logs to stderr")
	c.Flags().BoolVar(&selfRestart, "self-restart", true, "an HA member whose memory may hold edits its group lacks restarts itself in place to reload from the group's log (false: it exits with status 1)")
	for _, f := range []struct{ name, usage string }{
		{"rpc-addr", "gRPC listen address (rpc_addr)"},
		{"http-addr", "status page and metrics listen address (http_addr)"},
		{"meta-dir", "directory of the edit log and checkpoints (meta_dir)"},
		{"placement", "replica placement policy: rackaware, speedaware, speedaware-paper or mincut (placement)"},
		{"auth", "secure (the default) or simple: trust asserted user names, trusted networks only (auth)"},
	} {
		overrides[f.name] = c.Flags().String(f.name, "", f.usage)
	}
	return c
}

func runNamenode(cfg namenode.Config, log *slog.Logger, readyFile string, selfRestart bool) error {
	// Catch signals before anything else, so a SIGTERM during a long
	// edit-log replay still stops cleanly.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	nn, err := namenode.New(cfg, log)
	if err != nil {
		return err
	}
	// After New: the namespace load runs with the collector off.
	defer heapfloor.Keep(cfg.HeapMin)()
	if err := nn.Start(); err != nil {
		nn.Close()
		return err
	}
	if err := writeReadyFile(readyFile, map[string]any{"pid": os.Getpid(), "rpc": nn.Addr(), "http": nn.HTTPAddr()}); err != nil {
		nn.Close()
		return fmt.Errorf("ready file: %w", err)
	}
	select {
	case s := <-sig:
		log.Info("namenode stopping", "signal", s.String())
		return nn.Close()
	case ferr := <-nn.Fatal(): // HA: memory ahead of the group, or its log stopped; a restart reloads it
		// The exit must not wait on a close that hangs: raft v1.7.3's
		// pipelined replication can wedge its shutdown
		// (hashicorp/raft#612), and a chaos run saw a deposed active
		// wait in Close for minutes, one member of its group down
		// and unrestartable. What it has is on disk (the group's log
		// is fsynced), so leaving without the close is a crash the
		// restart recovers from, as after kill -9.
		closed := make(chan struct{})
		go func() {
			nn.Close()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(fatalCloseGrace):
			log.Error("namenode close did not finish after a fatal error; exiting without it", "grace", fatalCloseGrace)
		}
		if !selfRestart {
			return ferr
		}
		// What a service manager would do, without one: a fresh process
		// image reloads from the group's snapshot and log. The pause keeps
		// a member that keeps failing from spinning, and a stop asked for
		// meanwhile wins.
		select {
		case s := <-sig:
			log.Info("namenode stopping instead of restarting", "signal", s.String())
			return ferr
		case <-time.After(selfRestartPause):
		}
		exe, err := os.Executable()
		if err != nil {
			return errors.Join(ferr, fmt.Errorf("restart: %w", err))
		}
		log.Warn("namenode restarting itself to reload from its HA group's log", "error", ferr.Error(), "exe", exe)
		return errors.Join(ferr, fmt.Errorf("restart: %w", syscall.Exec(exe, os.Args, os.Environ())))
	}
}

// selfRestartPause is how long a namenode waits before it restarts
// itself after a fatal error.
const selfRestartPause = time.Second

// fatalCloseGrace bounds the close of a namenode that must exit.
const fatalCloseGrace = 10 * time.Second
