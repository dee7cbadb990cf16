package main

import (
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"smarth/internal/daemonconf"
	"smarth/internal/logfile"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/resourcemanager"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newResourceManagerCmd()} })

// mrDaemonFlags are the flags every MapReduce daemon takes.
type mrDaemonFlags struct {
	config, readyFile, logFile string
}

func (f *mrDaemonFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.config, "config", "", "YAML config file")
	c.Flags().StringVar(&f.readyFile, "ready-file", "", "write a JSON file with the pid and bound addresses once listening")
	c.Flags().StringVar(&f.logFile, "log-file", "", "log to this file instead of stderr")
}

// load reads the config file over the defaults in cfg; unknown keys are
// errors, as for the DFS daemons.
func (f *mrDaemonFlags) load(cfg any) error {
	if f.config == "" {
		return nil
	}
	return daemonconf.Load(f.config, cfg)
}

func (f *mrDaemonFlags) logger(rot logfile.Rotation) (*slog.Logger, io.Closer, error) {
	return daemonLogger(f.logFile, rot)
}

// ready writes the ready file atomically, with this process's pid.
func (f *mrDaemonFlags) ready(keys map[string]any) error {
	keys["pid"] = os.Getpid()
	return writeReadyFile(f.readyFile, keys)
}

func waitForSignal() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
	<-ch
	signal.Stop(ch)
}

// mrRegistry is the app registry of the job CLI and the node managers.
func mrRegistry() *mapreduce.Registry { return mapreduce.NewRegistry(apps.All()...) }

func newResourceManagerCmd() *cobra.Command {
	var df mrDaemonFlags
	var rpcAddr, httpAddr, namenode, scheduler, authMode string
	c := &cobra.Command{
		Use:   "resourcemanager",
		Short: "Run the MapReduce resource manager (jobs, node heartbeats, scheduling)",
		Long: `Run the MapReduce resource manager. Settings come from --config (YAML; every
key, its default and meaning in docs/config.md) with flags overriding them.

Authentication is secure unless the config says auth: simple (or --auth
simple, which logs a warning): job callers prove their user with a
credential, checked against auth_secret_file (the namenode's identity
secret), and the resource manager reaches the namenode with its own
credential, token_file (made with smarth login). It does not start without
either. See docs/security.md.`,
		Example: `  smarth resourcemanager --config rm.yaml --ready-file rm.ready
  smarth resourcemanager --namenode 127.0.0.1:8020 --scheduler delay --auth simple   # trusted network only`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := resourcemanager.DefaultConfig()
			if err := df.load(&cfg); err != nil {
				return usageErr("%v", err)
			}
			for flag, dst := range map[string]*string{"rpc-addr": &cfg.RPCAddr, "http-addr": &cfg.HTTPAddr, "namenode": &cfg.NameNode, "scheduler": &cfg.Scheduler, "auth": &cfg.Auth} {
				if cmd.Flags().Changed(flag) {
					*dst, _ = cmd.Flags().GetString(flag)
				}
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("resourcemanager config: %v", err)
			}
			log, closer, err := df.logger(cfg.Log)
			if err != nil {
				return err
			}
			defer closer.Close()
			rm, err := resourcemanager.New(cfg, log)
			if err != nil {
				return err
			}
			if err := rm.Start(); err != nil {
				return err
			}
			defer rm.Close()
			if err := df.ready(map[string]any{"rpc": rm.RPCAddr(), "http": rm.HTTPAddr()}); err != nil {
				return err
			}
			waitForSignal()
			log.Info("resource manager stopping")
			return nil
		},
	}
	df.add(c)
	c.Flags().StringVar(&rpcAddr, "rpc-addr", "", "gRPC address (overrides rpc_addr)")
	c.Flags().StringVar(&httpAddr, "http-addr", "", "web/metrics address (overrides http_addr)")
	c.Flags().StringVar(&namenode, "namenode", "", "namenode host:port (overrides namenode)")
	c.Flags().StringVar(&scheduler, "scheduler", "", "fifo or delay (overrides scheduler)")
	c.Flags().StringVar(&authMode, "auth", "", "secure (the default) or simple: trust asserted user names, trusted networks only (overrides auth)")
	return c
}
