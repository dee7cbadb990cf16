package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"smarth/internal/datanode"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newDatanodeCmd()} })

func newDatanodeCmd() *cobra.Command {
	var configFile, readyFile, logFile string
	overrides := map[string]*string{}
	c := &cobra.Command{
		Use:   "datanode",
		Short: "Run a datanode: store blocks, serve the data-transfer protocol, follow the namenode",
		Long: `Run a datanode. It registers with the namenode (retrying while the namenode is
down), heartbeats, reports its blocks, serves reads and pipeline writes on
data_addr, lease recovery on ipc_addr and Prometheus metrics on
http_addr/metrics. Settings come from --config (YAML, keys as in the datanode
config contract) with flags overriding them. It stops on SIGTERM or SIGINT.`,
		Example: `  smarth datanode --namenode 127.0.0.1:8020 --data-dir /var/smarth/dn1
  smarth datanode --config dn1.yaml --ready-file dn1.ready --log-file dn1.log
  smarth datanode --config dn1.yaml --data-addr 127.0.0.1:0 --http-addr 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := datanode.DefaultConfig()
			if configFile != "" {
				if err := loadDatanodeConfig(configFile, &cfg); err != nil {
					return usageErr("%v", err)
				}
			}
			targets := map[string]*string{
				"namenode": &cfg.NameNode, "data-dir": &cfg.DataDir, "data-addr": &cfg.DataAddr, "ipc-addr": &cfg.IPCAddr,
				"http-addr": &cfg.HTTPAddr, "hostname": &cfg.Hostname, "rack": &cfg.Rack, "advertise-ip": &cfg.AdvertiseIP,
			}
			for name, v := range overrides {
				if cmd.Flags().Changed(name) {
					*targets[name] = *v
				}
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("datanode: %v", err)
			}
			log, closeLog, err := datanodeLogger(logFile)
			if err != nil {
				return err
			}
			defer closeLog.Close()
			return runDatanode(cfg, log, readyFile)
		},
	}
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	c.Flags().StringVar(&configFile, "config", "", "YAML config file")
	c.Flags().StringVar(&readyFile, "ready-file", "", `once listening, write {"pid","id","data","ipc","http"} as JSON to this file`)
	c.Flags().StringVar(&logFile, "log-file", "", "write JSON logs to this file instead of text logs to stderr")
	for _, f := range []struct{ name, usage string }{
		{"namenode", "namenode host:port (namenode)"},
		{"data-dir", "directory for replicas (data_dir)"},
		{"data-addr", "data-transfer listen address (data_addr)"},
		{"ipc-addr", "inter-datanode gRPC listen address (ipc_addr)"},
		{"http-addr", "metrics listen address (http_addr)"},
		{"hostname", "name reported to the namenode (hostname)"},
		{"rack", "rack reported at registration (rack)"},
		{"advertise-ip", "IP address other hosts use to reach this node (advertise_ip)"},
	} {
		overrides[f.name] = c.Flags().String(f.name, "", f.usage)
	}
	return c
}

// loadDatanodeConfig reads a YAML config over the defaults in cfg; unknown
// keys are errors so that a typo does not silently fall back to a default.
func loadDatanodeConfig(path string, cfg *datanode.Config) error {
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

func datanodeLogger(path string) (*slog.Logger, io.Closer, error) {
	if path == "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), io.NopCloser(nil), nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, err
	}
	return slog.New(slog.NewJSONHandler(f, nil)), f, nil
}

func runDatanode(cfg datanode.Config, log *slog.Logger, readyFile string) error {
	dn, err := datanode.New(cfg, log)
	if err != nil {
		return err
	}
	if err := dn.Start(); err != nil {
		return err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	info := dn.Info()
	addr := func(bound string, port uint32) string {
		// A wildcard listen address is not dialable; report the advertised IP.
		if h, _, err := net.SplitHostPort(bound); err == nil && net.ParseIP(h) != nil && !net.ParseIP(h).IsUnspecified() {
			return bound
		}
		return net.JoinHostPort(info.GetIpAddr(), strconv.Itoa(int(port)))
	}
	ready := map[string]any{
		"pid":  os.Getpid(),
		"id":   dn.ID(),
		"data": addr(dn.DataAddr(), info.GetDataPort()),
		"ipc":  addr(dn.IPCAddr(), info.GetIpcPort()),
		"http": addr(dn.HTTPAddr(), info.GetHttpPort()),
	}
	if err := writeDatanodeReady(readyFile, ready); err != nil {
		dn.Close()
		return fmt.Errorf("ready file: %w", err)
	}
	s := <-sig
	log.Info("datanode stopping", "signal", s.String())
	return dn.Close()
}

// writeDatanodeReady writes the ready file atomically (temp file + rename).
func writeDatanodeReady(path string, keys map[string]any) error {
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
