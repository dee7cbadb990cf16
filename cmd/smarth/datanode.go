package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"

	"smarth/internal/daemonconf"
	"smarth/internal/datanode"
	"smarth/internal/datanode/webhdfs"
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
http_addr/metrics. Settings come from --config (YAML; every key, its default
and meaning in docs/config.md) with flags overriding them. It stops on
SIGTERM or SIGINT.

Authentication is secure unless the config says auth: simple (or --auth
simple, which logs a warning). Secure, the datanode needs datanode_key_file, a
0600 copy of the namenode's datanode key (its meta_dir/datanode.key unless
configured), and does not start without it. See docs/security.md.`,
		Example: `  smarth datanode --namenode 127.0.0.1:8020 --data-dir /var/smarth/dn1 --datanode-key-file /etc/smarth/datanode.key
  smarth datanode --config dn1.yaml --ready-file dn1.ready --log-file dn1.log
  smarth datanode --config dn1.yaml --data-addr 127.0.0.1:0 --http-addr 127.0.0.1:0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := datanode.DefaultConfig()
			if configFile != "" {
				if err := daemonconf.Load(configFile, &cfg); err != nil {
					return usageErr("%v", err)
				}
			}
			targets := map[string]*string{
				"namenode": &cfg.NameNode, "data-dir": &cfg.DataDir, "data-addr": &cfg.DataAddr, "ipc-addr": &cfg.IPCAddr,
				"http-addr": &cfg.HTTPAddr, "hostname": &cfg.Hostname, "rack": &cfg.Rack, "advertise-ip": &cfg.AdvertiseIP,
				"auth": &cfg.Auth, "datanode-key-file": &cfg.DatanodeKeyFile,
			}
			for name, v := range overrides {
				if cmd.Flags().Changed(name) {
					*targets[name] = *v
				}
			}
			if err := cfg.Validate(); err != nil {
				return usageErr("datanode: %v", err)
			}
			log, closeLog, err := daemonLogger(logFile, cfg.Log)
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
		{"auth", "secure (the default) or simple: trust asserted user names, trusted networks only (auth)"},
		{"datanode-key-file", "copy (0600) of the namenode's datanode key, required with auth secure (datanode_key_file)"},
	} {
		overrides[f.name] = c.Flags().String(f.name, "", f.usage)
	}
	return c
}

func runDatanode(cfg datanode.Config, log *slog.Logger, readyFile string) error {
	// Catch signals before anything else, so a SIGTERM while the store is
	// scanned still stops cleanly.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sig)
	// WebHDFS's datanode side moves bytes with the client library, which
	// the datanode package may not import; it is mounted from here.
	cliTLS, err := cfg.Wire.Client()
	if err != nil {
		return err
	}
	cfg.WebHDFS = webhdfs.New(webhdfs.Config{NameNode: cfg.NameNode, ClientHost: cfg.Hostname, TLS: cliTLS, Logger: log.With("component", "webhdfs")})
	dn, err := datanode.New(cfg, log)
	if err != nil {
		return err
	}
	if err := dn.Start(); err != nil {
		dn.Close()
		return err
	}
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
	if err := writeReadyFile(readyFile, ready); err != nil {
		dn.Close()
		return fmt.Errorf("ready file: %w", err)
	}
	s := <-sig
	log.Info("datanode stopping", "signal", s.String())
	return dn.Close()
}
