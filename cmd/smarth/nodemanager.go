package main

import (
	"github.com/spf13/cobra"

	"smarth/internal/nodemanager"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newNodeManagerCmd()} })

func newNodeManagerCmd() *cobra.Command {
	var df mrDaemonFlags
	var s struct{ rm, nn, host, rack, rpc, shuffle, http, work, auth, token string }
	c := &cobra.Command{
		Use:   "nodemanager",
		Short: "Run a MapReduce node manager (runs tasks, serves map output)",
		Long: `Run a MapReduce node manager. Settings come from --config (YAML; every key,
its default and meaning in docs/config.md) with flags overriding them.

Authentication is secure unless the config says auth: simple (or --auth
simple, which logs a warning): the node manager reaches the namenode with
its own credential, token_file (default $SMARTH_TOKEN_FILE, else
~/.smarth/token; made with smarth login), and does not start without one.

Tasks' user code (streaming commands) runs in containers, as YARN's
LinuxContainerExecutor: as the submitter's OS account where the host has
one that run_as, min_user_id and banned_users allow, else as run_as_user
(nobody), with an allow-listed environment, a private work directory and
a cgroup with the job's memory-mb and vcores. This needs root; a secure
node manager that is not root refuses user code rather than run it as
itself. See docs/security.md.`,
		Example: `  smarth nodemanager --config nm.yaml --ready-file nm.ready
  smarth nodemanager --resourcemanager 127.0.0.1:8032 --namenode 127.0.0.1:8020 --hostname dn1 --work-dir /tmp/nm1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := nodemanager.DefaultConfig()
			if err := df.load(&cfg); err != nil {
				return usageErr("%v", err)
			}
			for flag, dst := range map[string]*string{"resourcemanager": &cfg.ResourceManager, "namenode": &cfg.NameNode,
				"hostname": &cfg.Hostname, "rack": &cfg.Rack, "rpc-addr": &cfg.RPCAddr, "shuffle-addr": &cfg.ShuffleAddr,
				"http-addr": &cfg.HTTPAddr, "work-dir": &cfg.WorkDir, "auth": &cfg.Auth, "token-file": &cfg.TokenFile,
				"container-executor": &cfg.ContainerExecutor, "run-as": &cfg.Containers.RunAs, "run-as-user": &cfg.Containers.RunAsUser,
				"namenode-http": &cfg.NameNodeHTTP} {
				if cmd.Flags().Changed(flag) {
					*dst, _ = cmd.Flags().GetString(flag)
				}
			}
			if cmd.Flags().Changed("min-user-id") {
				cfg.Containers.MinUserID, _ = cmd.Flags().GetInt("min-user-id")
			}
			if cmd.Flags().Changed("banned-users") {
				cfg.Containers.BannedUsers, _ = cmd.Flags().GetStringSlice("banned-users")
			}
			cfg.Registry = mrRegistry()
			log, closer, err := df.logger(cfg.Log)
			if err != nil {
				return err
			}
			defer closer.Close()
			nm, err := nodemanager.New(cfg, log)
			if err != nil {
				return usageErr("nodemanager config: %v", err)
			}
			if err := nm.Start(); err != nil {
				return err
			}
			defer nm.Close()
			if err := df.ready(map[string]any{"rpc": nm.RPCAddr(), "shuffle": nm.ShuffleAddr(), "http": nm.HTTPAddr()}); err != nil {
				return err
			}
			waitForSignal()
			log.Info("node manager stopping")
			return nil
		},
	}
	df.add(c)
	f := c.Flags()
	f.StringVar(&s.rm, "resourcemanager", "", "resource manager host:port")
	f.StringVar(&s.nn, "namenode", "", "namenode host:port")
	f.StringVar(&s.host, "hostname", "", "this node's name; must equal the co-located datanode's hostname")
	f.StringVar(&s.rack, "rack", "", "this node's rack")
	f.StringVar(&s.rpc, "rpc-addr", "", "gRPC address")
	f.StringVar(&s.shuffle, "shuffle-addr", "", "map output HTTP address")
	f.StringVar(&s.http, "http-addr", "", "metrics address")
	f.StringVar(&s.work, "work-dir", "", "directory for spills and map output")
	f.StringVar(&s.auth, "auth", "", "secure (the default) or simple: no credential, trusted networks only")
	f.StringVar(&s.token, "token-file", "", "this node manager's credential for the namenode (token_file)")
	f.String("namenode-http", "", "the namenode's HTTP (WebHDFS) address: containers get a delegation token of their job's submitter")
	f.String("container-executor", "", "linux (the default: user code as run_as's user, in a cgroup; needs root) or default (as this process; auth: simple only)")
	f.String("run-as", "", "submitter (the default: the submitter's OS account where allowed, else run-as-user) or local-user")
	f.String("run-as-user", "", "the local user containers fall back to (default nobody)")
	f.Int("min-user-id", 0, "lowest uid a submitter's account may have (default 1000; run-as-user is exempt)")
	f.StringSlice("banned-users", nil, "accounts containers never run as (default hdfs,yarn,mapred,bin,root)")
	return c
}
