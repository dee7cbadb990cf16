package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/atomicfile"
	"smarth/internal/testbed"
	"smarth/internal/testbed/delayproxy"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newTestbedCmd()} })

// testbedFlags are shared by every testbed subcommand.
type testbedFlags struct {
	stateDir, workDir, binary string
	verbose                   bool
}

func (f *testbedFlags) manager(cmd *cobra.Command) (*testbed.Manager, error) {
	opt := testbed.Options{StateRoot: f.stateDir, WorkRoot: f.workDir, Binary: f.binary, Out: cmd.ErrOrStderr()}
	if f.verbose {
		opt.Runner = testbed.ExecRunner{Trace: cmd.ErrOrStderr()}
	}
	return testbed.New(opt)
}

func newTestbedCmd() *cobra.Command {
	f := &testbedFlags{}
	c := &cobra.Command{
		Use:   "testbed",
		Short: "Emulate a cluster of hosts, racks and throttled links on this machine (needs root)",
		Long: `A testbed is a cluster of emulated hosts on one Linux machine: one network
namespace per host, veth pairs into one bridge per rack, a router between the
racks, and tc shaping per host and destination class (NIC, same rack, other
racks), with optional latency and disk caps. The smarth daemons run inside the
hosts and talk real TCP. A YAML topology file describes it (docs/testbed.md);
ready files for the papers' scenarios are under testbed/.

State is kept in --state-dir so that "down" cleans up even after a crash.`,
		Example: `  sudo smarth testbed up testbed/two-rack-100.yaml
  sudo smarth testbed check
  sudo smarth testbed exec client -- smarth fs put big.dat /big.dat
  sudo smarth testbed shape dn3 --nic 50mbit
  sudo smarth testbed partition rack:rack-b --for 60s
  sudo smarth testbed down`,
	}
	pf := c.PersistentFlags()
	pf.StringVar(&f.stateDir, "state-dir", testbed.DefaultStateRoot, "where testbed state files live")
	pf.StringVar(&f.workDir, "work-dir", testbed.DefaultWorkRoot, "where testbed configs, data and logs live (one directory per testbed)")
	pf.BoolVarP(&f.verbose, "verbose", "v", false, "print every ip/tc command")
	c.AddCommand(newTestbedUpCmd(f), newTestbedDownCmd(f), newTestbedStatusCmd(f), newTestbedExecCmd(f),
		newTestbedShapeCmd(f), newTestbedPartitionCmd(f), newTestbedHealCmd(f), newTestbedCheckCmd(f),
		newTestbedEnterCmd(), newTestbedDelayProxyCmd())
	return c
}

func newTestbedUpCmd(f *testbedFlags) *cobra.Command {
	var u testbed.UpOptions
	var dryRun bool
	c := &cobra.Command{
		Use:   "up TOPOLOGY.yaml",
		Short: "Build the testbed of a topology file and start its daemons",
		Example: `  sudo smarth testbed up testbed/two-rack-100.yaml
  sudo smarth testbed up --no-daemons testbed/hetero.yaml
  sudo smarth testbed up --namenodes 3 testbed/two-rack-3-6.yaml   # an HA group of 3, TLS on
  smarth testbed up --dry-run testbed/two-rack-50.yaml    # print the ip/tc commands`,
		Args: testbedArgs(1, "a topology file"),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			if dryRun {
				cmds, daemons, err := m.DryRun(args[0], false, u)
				if err != nil {
					return err
				}
				for _, c := range cmds {
					fmt.Fprintln(cmd.OutOrStdout(), c)
				}
				for _, d := range daemons {
					fmt.Fprintf(cmd.OutOrStdout(), "# start %s: smarth %s\n", d.Name(), strings.Join(d.Args(), " "))
				}
				return nil
			}
			s, err := m.Up(cmd.Context(), args[0], u)
			if err != nil {
				return err
			}
			testbed.WriteStatus(cmd.OutOrStdout(), s)
			return nil
		},
	}
	c.Flags().StringVar(&f.binary, "binary", "", "the smarth binary that runs the daemons (default: this one)")
	c.Flags().BoolVar(&u.NoDaemons, "no-daemons", false, "build the network only")
	c.Flags().BoolVar(&u.KeepOnError, "keep-on-error", false, "leave a half-built testbed for inspection")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "print the commands and daemons without running anything (no root needed)")
	c.Flags().IntVar(&u.NameNodes, "namenodes", 0, "give the namenode role to this many hosts: 1, or an HA group of 3 or 5 (nn1..nnN, with TLS) that clients fail over across; the file's namenode hosts keep it, the others are spread over the racks (default: the file's)")
	return c
}

func newTestbedDownCmd(f *testbedFlags) *cobra.Command {
	var name string
	var purge bool
	c := &cobra.Command{
		Use:   "down",
		Short: "Stop a testbed's processes and remove its namespaces, links, qdiscs and cgroups",
		Long: `Down works from the state file and also removes anything named after the
testbed (namespaces smarth.NAME.*, cgroups smarth-testbed/NAME), so it cleans up
after a crash of "up" and can be run again safely. Data and logs stay in the
work dir (the next "up" of the same name starts the daemons on them again, like a
restarted cluster) unless --purge.`,
		Example: `  sudo smarth testbed down
  sudo smarth testbed down --name two-rack-100 --purge`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			r, err := m.Down(cmd.Context(), name)
			fmt.Fprintf(cmd.OutOrStdout(), "testbed %s: stopped %d processes, deleted %d namespaces, removed %d cgroups",
				r.Name, r.Stopped, len(r.Namespaces), len(r.Cgroups))
			if err != nil || !purge {
				if r.WorkDir != "" {
					fmt.Fprintf(cmd.OutOrStdout(), "; data and logs kept in %s", r.WorkDir)
				}
				fmt.Fprintln(cmd.OutOrStdout())
				return err
			}
			dir, err := m.Purge(r.Name)
			fmt.Fprintf(cmd.OutOrStdout(), "; deleted data and logs in %s\n", dir)
			return err
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	c.Flags().BoolVar(&purge, "purge", false, "also delete the testbed's configs, data and logs (the next up starts empty)")
	return c
}

func newTestbedStatusCmd(f *testbedFlags) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:     "status",
		Short:   "Show where a testbed's hosts and daemons are",
		Example: "  smarth testbed status\n  smarth testbed status --name hetero",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			s, err := m.Load(name)
			if err != nil {
				return err
			}
			testbed.WriteStatus(cmd.OutOrStdout(), s)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	return c
}

func newTestbedExecCmd(f *testbedFlags) *cobra.Command {
	var name string
	c := &cobra.Command{
		Use:   "exec HOST -- CMD [ARGS...]",
		Short: "Run a command on a testbed host (its namespace and disk caps)",
		Long: `The command runs inside the host's network namespace and disk-cap group, in
the host's work directory, with SMARTH_NAMENODE set to the testbed's namenode, so
"smarth fs" finds the cluster without flags. The exit status is the command's.`,
		Example: `  sudo smarth testbed exec client -- smarth fs put big.dat /big.dat
  sudo smarth testbed exec dn1 -- ip addr
  sudo smarth testbed exec client -- bash`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return usageErr("exec: write the host, then -- and the command: smarth testbed exec HOST -- CMD")
			}
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			if err := m.Preflight(); err != nil {
				return err
			}
			s, err := m.Load(name)
			if err != nil {
				return err
			}
			// No context: the command owns the terminal until it exits.
			x, err := m.Command(context.Background(), s, args[0], args[1:])
			if err != nil {
				return err
			}
			x.Stdin, x.Stdout, x.Stderr = os.Stdin, os.Stdout, os.Stderr
			signal.Ignore(syscall.SIGINT, syscall.SIGQUIT) // the child gets them from the terminal
			err = x.Run()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return &exitError{code: ee.ExitCode(), err: fmt.Errorf("%s on %s: %w", args[1], args[0], err)}
			}
			return err
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	return c
}

func newTestbedShapeCmd(f *testbedFlags) *cobra.Command {
	var name, rack, uplink string
	keys := []string{"nic", "same-rack", "cross-rack", "disk-read", "disk-write", "latency", "jitter", "loss"}
	vals := make([]string, len(keys))
	c := &cobra.Command{
		Use:   "shape [HOST] [--nic R] [--same-rack R] [--cross-rack R] [--disk-read B] [--disk-write B]",
		Short: "Change a host's rates (or a rack's uplink) while the testbed runs",
		Long: `Only the limits given change; "unlimited" (or "") removes one. Rates use the
topology file's units: 50mbit or 50Mbit/s for links, 40MB/s for disks.`,
		Example: `  sudo smarth testbed shape dn3 --nic 50mbit
  sudo smarth testbed shape dn3 --nic unlimited
  sudo smarth testbed shape dn1 --cross-rack 100mbit --disk-read 40MB/s
  sudo smarth testbed shape --rack rack-b --uplink 150mbit`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			if rack != "" {
				if len(args) > 0 {
					return usageErr("shape: give either a HOST or --rack, not both")
				}
				old, now, err := m.ShapeUplink(cmd.Context(), name, rack, uplink)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "rack %s uplink: %s -> %s\n", rack, old, now)
				return nil
			}
			if len(args) == 0 {
				return usageErr("shape: name a HOST (or --rack RACK --uplink RATE)")
			}
			var ch testbed.Change
			ptrs := []**string{&ch.NIC, &ch.SameRack, &ch.CrossRack, &ch.DiskRead, &ch.DiskWrite, &ch.Latency, &ch.Jitter, &ch.Loss}
			changed := false
			for i, k := range keys {
				if cmd.Flags().Changed(k) {
					*ptrs[i] = &vals[i]
					changed = true
				}
			}
			if !changed {
				return usageErr("shape: nothing to change: give at least one of --%s", strings.Join(keys, ", --"))
			}
			old, now, err := m.Shape(cmd.Context(), name, args[0], ch)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: nic %s -> %s, same rack %s -> %s, cross rack %s -> %s, disk read %s -> %s, disk write %s -> %s\n",
				args[0], old.NIC, now.NIC, old.SameRack, now.SameRack, old.CrossRack, now.CrossRack,
				old.DiskRead, now.DiskRead, old.DiskWrite, now.DiskWrite)
			return nil
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	for i, k := range keys {
		c.Flags().StringVar(&vals[i], k, "", "new "+k+" limit")
	}
	c.Flags().StringVar(&rack, "rack", "", "change this rack's uplink instead of a host")
	c.Flags().StringVar(&uplink, "uplink", "", "the rack's new uplink rate (with --rack)")
	return c
}

func newTestbedCheckCmd(f *testbedFlags) *cobra.Command {
	var name string
	var pairs []string
	var o testbed.CheckOptions
	c := &cobra.Command{
		Use:   "check",
		Short: "Measure throughput between hosts and compare it with the configured rates",
		Long: `Check runs TCP throughput tests between hosts, one at a time: one pair per
combination of class (same rack, cross rack) and host limits, and for hosts whose
NIC binds, two flows into (nic-in) and out of (nic-out) the host at once. The
measured goodput is printed beside the configured rate; the command fails if any
is further off than the tolerance. A probe that comes out too low is measured
again (--retries): on a busy machine the measuring process can be starved of CPU;
the tries are printed. Stop other work on the testbed first: the measurements
share the links.`,
		Example: `  sudo smarth testbed check
  sudo smarth testbed check --all --duration 5s
  sudo smarth testbed check --pair dn1:dn6 --pair client:dn2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			for _, p := range pairs {
				a, b, ok := strings.Cut(p, ":")
				if !ok || a == "" || b == "" {
					return usageErr("--pair %q: want SENDER:RECEIVER", p)
				}
				o.Pairs = append(o.Pairs, [2]string{a, b})
			}
			if o.Tolerance <= 0 || o.Tolerance >= 1 {
				return usageErr("--tolerance %v: want a fraction between 0 and 1", o.Tolerance)
			}
			if o.Warmup >= o.Duration {
				return usageErr("--warmup %s must be shorter than --duration %s", o.Warmup, o.Duration)
			}
			m, err := f.manager(cmd)
			if err != nil {
				return err
			}
			if err := m.Preflight(); err != nil {
				return err
			}
			s, err := m.Load(name)
			if err != nil {
				return err
			}
			ms, err := m.Check(cmd.Context(), s.Name, o)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "testbed %s: TCP throughput, one test at a time, %s each after a %s warm-up\n", s.Name, o.Duration, o.Warmup)
			return testbed.WriteCheck(cmd.OutOrStdout(), s.Name, ms, o)
		},
	}
	c.Flags().StringVar(&name, "name", "", "the testbed (default: the only one up)")
	c.Flags().BoolVar(&o.All, "all", false, "measure every ordered host pair")
	c.Flags().StringArrayVar(&pairs, "pair", nil, "measure only SENDER:RECEIVER (repeatable)")
	c.Flags().DurationVar(&o.Duration, "duration", 3*time.Second, "length of each test")
	c.Flags().DurationVar(&o.Warmup, "warmup", 500*time.Millisecond, "start of each test not counted")
	c.Flags().Float64Var(&o.Tolerance, "tolerance", 0.10, "allowed relative deviation from the configured rate")
	c.Flags().IntVar(&o.Retries, "retries", 1, "re-measure a probe that came out too low (CPU starvation on a busy machine) up to this many times")
	return c
}

// newTestbedEnterCmd is the helper the testbed starts processes through:
// join the host's cgroup, then exec the rest (ip netns exec ...).
func newTestbedEnterCmd() *cobra.Command {
	var procs string
	c := &cobra.Command{
		Use:     "enter [--cgroup-procs FILE] -- CMD [ARGS...]",
		Short:   "Join a cgroup and exec a command (used by the testbed)",
		Example: "  smarth testbed enter --cgroup-procs /sys/fs/cgroup/blkio/smarth-testbed/t/dn1/cgroup.procs -- ip netns exec smarth.t.dn1 sh",
		Hidden:  true,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return testbed.Enter(procs, args)
		},
	}
	c.Flags().StringVar(&procs, "cgroup-procs", "", "the cgroup.procs file to join first")
	return c
}

// newTestbedDelayProxyCmd runs one host's delay proxy (latency_mode: proxy).
func newTestbedDelayProxyCmd() *cobra.Command {
	var config, ready string
	c := &cobra.Command{
		Use:     "delayproxy --config FILE.json [--ready-file F]",
		Short:   "Run a TCP delay proxy (used by the testbed where the kernel has no netem)",
		Example: "  smarth testbed delayproxy --config conf/delayproxy.json --ready-file run/delayproxy.ready",
		Hidden:  true,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if config == "" {
				return usageErr("delayproxy: --config is required")
			}
			cfg, err := delayproxy.LoadConfig(config)
			if err != nil {
				return err
			}
			p, err := delayproxy.New(cfg, slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil)))
			if err != nil {
				return err
			}
			if err := p.Start(); err != nil {
				return err
			}
			defer p.Close()
			if ready != "" {
				data, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "listen": p.Addrs()})
				if err := atomicfile.Write(ready, data, 0o644); err != nil {
					return err
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			<-ctx.Done()
			return nil
		},
	}
	c.Flags().StringVar(&config, "config", "", "proxy config (JSON)")
	c.Flags().StringVar(&ready, "ready-file", "", "written once listening")
	return c
}

// testbedArgs is cobra.ExactArgs with a usage error naming what is missing.
func testbedArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageErr("%s: want %s (got %d arguments)", cmd.CommandPath(), what, len(args))
		}
		return nil
	}
}
