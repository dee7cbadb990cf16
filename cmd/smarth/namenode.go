package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"smarth/internal/namenode"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newNamenodeCmd()} })

func newNamenodeCmd() *cobra.Command {
	var configFile, readyFile, logFile string
	overrides := map[string]*string{}
	c := &cobra.Command{
		Use:   "namenode",
		Short: "Run the namenode: namespace, block map, placement, leases, re-replication",
		Long: `Run the namenode. It loads the namespace from meta_dir (a new, empty one if the
directory is empty), serves ClientProtocol and DatanodeProtocol over gRPC on
rpc_addr, and a status page and Prometheus metrics on http_addr. Every
acknowledged change is in its edit log before the reply, so kill -9 loses
nothing acknowledged. It starts in safe mode until the datanodes have
reported enough blocks. Settings come from --config (YAML, keys as in the
namenode config contract) with flags overriding them. It stops on SIGTERM or
SIGINT.`,
		Example: `  smarth namenode --meta-dir /var/smarth/nn
  smarth namenode --config nn.yaml --ready-file nn.ready --log-file nn.log
  smarth namenode --config nn.yaml --rpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := namenode.DefaultConfig()
			if configFile != "" {
				if err := loadNamenodeConfig(configFile, &cfg); err != nil {
					return usageErr("%v", err)
				}
			}
			targets := map[string]*string{
				"rpc-addr": &cfg.RPCAddr, "http-addr": &cfg.HTTPAddr, "meta-dir": &cfg.MetaDir, "placement": &cfg.Placement,
			}
			for name, v := range overrides {
				if cmd.Flags().Changed(name) {
					*targets[name] = *v
				}
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("namenode: %v", err)
			}
			log, closeLog, err := namenodeLogger(logFile)
			if err != nil {
				return err
			}
			defer closeLog.Close()
			return runNamenode(cfg, log, readyFile)
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	c.Flags().StringVar(&configFile, "config", "", "YAML config file")
	c.Flags().StringVar(&readyFile, "ready-file", "", `once listening, write {"pid","rpc","http"} as JSON to this file`)
	c.Flags().StringVar(&logFile, "log-file", "", "write JSON logs to this file instead of text logs to stderr")
	for _, f := range []struct{ name, usage string }{
		{"rpc-addr", "gRPC listen address (rpc_addr)"},
		{"http-addr", "status page and metrics listen address (http_addr)"},
		{"meta-dir", "directory of the edit log and checkpoints (meta_dir)"},
		{"placement", "replica placement policy: rackaware or speedaware (placement)"},
	} {
		overrides[f.name] = c.Flags().String(f.name, "", f.usage)
	}
	return c
}

// loadNamenodeConfig reads a YAML config over the defaults in cfg; unknown
// keys are errors so that a typo does not silently fall back to a default.
func loadNamenodeConfig(path string, cfg *namenode.Config) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

func namenodeLogger(path string) (*slog.Logger, io.Closer, error) {
	if path == "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), io.NopCloser(nil), nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewJSONHandler(f, nil)), f, nil
}

func runNamenode(cfg namenode.Config, log *slog.Logger, readyFile string) error {
	// Catch signals before anything else, so a SIGTERM during a long
	// edit-log replay still stops cleanly.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	nn, err := namenode.New(cfg, log)
	if err != nil {
		return err
	}
	if err := nn.Start(); err != nil {
		nn.Close()
		return err
	}
	if err := writeNamenodeReady(readyFile, map[string]any{"pid": os.Getpid(), "rpc": nn.Addr(), "http": nn.HTTPAddr()}); err != nil {
		nn.Close()
		return fmt.Errorf("ready file: %w", err)
	}
	s := <-sig
	log.Info("namenode stopping", "signal", s.String())
	return nn.Close()
}

// writeNamenodeReady writes the ready file atomically (temp file + rename).
func writeNamenodeReady(path string, keys map[string]any) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
