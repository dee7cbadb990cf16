package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/cluster"
	"smarth/internal/doctor"
	"smarth/internal/testbed"
	"smarth/internal/testbed/daemonplan"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newDoctorCmd()} })

type doctorFlags struct {
	root, testbed, revertFile, revert string
	dataDirs, only, ownPorts          []string
	ports                             []int
	json, fix, cluster                bool
}

func newDoctorCmd() *cobra.Command {
	var f doctorFlags
	c := &cobra.Command{
		Use:   "doctor",
		Short: "Check a host before the cluster goes live (THP, swappiness, limits, clock, DNS, services, sysctls, disks, ports)",
		Long: `Runs the checks Hadoop operators run before a cluster goes live and prints,
per check, ok / warn / fail, what was seen, why it matters and the command that
fixes it. Exit status 1 when any check fails, 0 otherwise (warnings included).

It changes nothing unless --fix is given. --fix applies only the fixes that
are writes of kernel tunables (transparent huge pages, vm.swappiness, network
sysctls), after writing their old values to a revert file;
'smarth doctor --revert FILE' puts them back. Limits, mounts, services and DNS
need the operator and are given as commands.

--cluster checks the local cluster's data directories and treats its ports as
in use by it; --testbed NAME runs the doctor inside every host namespace of a
testbed (network sysctls are per namespace there).`,
		Example: `  smarth doctor
  smarth doctor --data-dir /data/1 --data-dir /data/2 --json
  smarth doctor --cluster
  sudo smarth doctor --fix --revert-file /root/doctor-revert.json
  sudo smarth doctor --revert /root/doctor-revert.json
  sudo smarth doctor --testbed tb1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDoctor(cmd, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.root, "root", "/", "read /proc, /sys and data directories under this root (tests, chroots)")
	fl.StringSliceVar(&f.dataDirs, "data-dir", nil, "data directory to check (repeatable)")
	fl.IntSliceVar(&f.ports, "port", nil, "port smarth uses (repeatable; default 8020, 9870, 8032)")
	fl.StringSliceVar(&f.only, "check", nil, "run only these checks: "+strings.Join(checkIDs(), ", "))
	fl.BoolVar(&f.json, "json", false, "print the reports as JSON")
	fl.BoolVar(&f.fix, "fix", false, "apply the kernel-tunable fixes (after writing the revert file)")
	fl.StringVar(&f.revertFile, "revert-file", "", "where --fix records the old values (default smarth-doctor-revert-<time>.json here)")
	fl.StringVar(&f.revert, "revert", "", "restore the values recorded in this revert file and exit")
	fl.BoolVar(&f.cluster, "cluster", false, "check the local cluster's data directories and ports")
	fl.StringVar(&f.testbed, "testbed", "", "run on every host of this testbed")
	// --testbed passes each host's own daemon ports down, so that the
	// namenode holding 8020 on its host is not "another program".
	fl.StringSliceVar(&f.ownPorts, "own-port", nil, "PORT=DAEMON: a port this host's smarth daemon holds")
	_ = fl.MarkHidden("own-port")
	return c
}

func checkIDs() []string {
	var ids []string
	for _, c := range doctor.Checks() {
		ids = append(ids, c.ID)
	}
	return ids
}

func runDoctor(cmd *cobra.Command, f *doctorFlags) error {
	for _, id := range f.only {
		if !containsStr(checkIDs(), id) {
			return usageErr("--check %q: want one of %s", id, strings.Join(checkIDs(), ", "))
		}
	}
	if f.testbed != "" && (f.fix || f.revert != "") {
		return usageErr("--testbed only checks; run --fix on the host itself")
	}
	env := doctor.NewEnv(f.root)
	env.DataDirs, env.Ports = f.dataDirs, f.ports
	if len(f.ownPorts) > 0 {
		if env.Ports == nil {
			env.Ports = doctor.DefaultPorts()
		}
		env.PortsInUse = map[int]string{}
		for _, kv := range f.ownPorts {
			p, name, ok := strings.Cut(kv, "=")
			n, err := strconv.Atoi(p)
			if !ok || err != nil || n <= 0 || n > 65535 {
				return usageErr("--own-port %q: want PORT=DAEMON", kv)
			}
			env.PortsInUse[n] = name
			if !slices.Contains(env.Ports, n) {
				env.Ports = append(env.Ports, n)
			}
		}
	}
	if f.revert != "" {
		done, err := doctor.Revert(env, f.revert)
		for _, c := range done {
			fmt.Fprintf(cmd.OutOrStdout(), "restored %s = %q\n", "/"+c.Path, c.Old)
		}
		return err
	}
	if f.cluster {
		if err := addClusterDirs(env); err != nil {
			return err
		}
	}
	var reports []doctor.Report
	if f.testbed != "" {
		rs, err := doctorTestbed(cmd.Context(), f, cmd.ErrOrStderr())
		if err != nil {
			return err
		}
		reports = rs
	} else {
		reports = []doctor.Report{doctor.Run(cmd.Context(), env, f.only)}
	}
	if err := printDoctor(cmd.OutOrStdout(), reports, f.json); err != nil {
		return err
	}
	if f.fix {
		if err := doctorFix(cmd.OutOrStdout(), env, reports[0], f.revertFile); err != nil {
			return err
		}
	}
	for _, r := range reports {
		if r.Worst() == doctor.Fail {
			return &exitError{code: 1, err: fmt.Errorf("doctor: host %s has failing checks", r.Host)}
		}
	}
	return nil
}

func doctorFix(w io.Writer, env *doctor.Env, r doctor.Report, revertFile string) error {
	if revertFile == "" {
		revertFile = "smarth-doctor-revert-" + time.Now().Format("20060102-150405") + ".json"
	}
	changes, err := doctor.Fix(env, r.Results, revertFile)
	for _, c := range changes {
		fmt.Fprintf(w, "fixed %s: /%s %q -> %q\n", c.Check, c.Path, c.Old, c.New)
	}
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		fmt.Fprintln(w, "nothing --fix can change; the other findings need the commands above")
		return nil
	}
	fmt.Fprintf(w, "old values in %s; undo with: smarth doctor --revert %s\n", revertFile, revertFile)
	return nil
}

func printDoctor(w io.Writer, reports []doctor.Report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(reports)
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := doctor.WriteTable(w, r); err != nil {
			return err
		}
	}
	return nil
}

// addClusterDirs adds the local cluster's data directories (one per daemon
// under <home>/data, the layout internal/cluster makes) and its listening
// ports as its own.
func addClusterDirs(env *doctor.Env) error {
	st, err := cluster.LoadState(cluster.Home())
	if err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	env.PortsInUse = map[int]string{}
	for _, d := range st.Daemons {
		dir := filepath.Join(st.Home, "data", d.Name)
		if _, err := os.Stat(dir); err == nil {
			env.DataDirs = append(env.DataDirs, dir)
		}
		for _, a := range []string{d.Ready.RPC, d.Ready.HTTP, d.Ready.Data} {
			if _, p, err := net.SplitHostPort(a); err == nil {
				if n, err := strconv.Atoi(p); err == nil && d.Running() {
					env.PortsInUse[n] = d.Name
					env.Ports = append(env.Ports, n)
				}
			}
		}
	}
	return nil
}

// doctorTestbed runs `smarth doctor --json` in each host's namespace of
// the testbed and collects the reports, named by testbed host.
func doctorTestbed(ctx context.Context, f *doctorFlags, logw io.Writer) ([]doctor.Report, error) {
	m, err := testbed.New(testbed.Options{Out: logw})
	if err != nil {
		return nil, err
	}
	s, err := m.Load(f.testbed)
	if err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	argv := []string{self, "doctor", "--json"}
	for _, d := range f.dataDirs {
		argv = append(argv, "--data-dir", d)
	}
	for _, id := range f.only {
		argv = append(argv, "--check", id)
	}
	// The plan is rebuilt from the topology (the state does not keep the
	// configs): each host's daemons, their ports and data directories.
	plan, err := daemonplan.Plan(s.Topology, s.WorkDir)
	if err != nil {
		return nil, err
	}
	var out []doctor.Report
	for _, host := range s.Topology.HostNames() {
		hostArgv := slices.Clone(argv)
		for _, d := range plan {
			if d.Host != host {
				continue
			}
			for _, k := range slices.Sorted(maps.Keys(d.Config)) {
				a, _ := d.Config[k].(string)
				if _, p, err := net.SplitHostPort(a); err == nil && strings.HasSuffix(k, "_addr") {
					hostArgv = append(hostArgv, "--own-port", p+"="+d.Name())
				}
				if (k == "data_dir" || k == "meta_dir") && a != "" && len(f.dataDirs) == 0 {
					hostArgv = append(hostArgv, "--data-dir", a)
				}
			}
		}
		x, err := m.Command(ctx, s, host, hostArgv)
		if err != nil {
			return nil, err
		}
		var stdout, stderr bytes.Buffer
		x.Stdout, x.Stderr = &stdout, &stderr
		runErr := x.Run() // exit 1 means failing checks; the JSON still came
		var rs []doctor.Report
		if err := json.Unmarshal(stdout.Bytes(), &rs); err != nil || len(rs) != 1 {
			return nil, fmt.Errorf("doctor on %s: %v %v: %s", host, runErr, err, strings.TrimSpace(stderr.String()))
		}
		rs[0].Host = host + " (" + rs[0].Host + ")"
		out = append(out, rs[0])
	}
	return out, nil
}

func containsStr(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
