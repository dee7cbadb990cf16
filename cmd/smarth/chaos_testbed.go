package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/chaos"
	"smarth/internal/cluster"
	"smarth/internal/testbed"
	"smarth/internal/testbed/topo"
)

// testbedChaos is smarth chaos --testbed: partitions instead of kills.
type testbedChaos struct {
	name, cuts     string
	minCut, maxCut time.Duration
}

// setup prepares o for a partition run on the testbed. Outside the
// testbed it runs the same command inside the testbed's first client
// host (where the testbed's addresses are reachable) and reports done.
func (tb *testbedChaos) setup(cmd *cobra.Command, o *chaos.Options) (done bool, err error) {
	if tb.minCut <= 0 || tb.maxCut < tb.minCut {
		return false, usageErr("--min-cut must be positive and at most --max-cut")
	}
	m, err := testbed.New(testbed.Options{Out: cmd.ErrOrStderr()})
	if err != nil {
		return false, err
	}
	s, err := m.Load(tb.name)
	if err != nil {
		return false, err
	}
	if os.Getenv("SMARTH_TESTBED") != s.Name || os.Getenv("SMARTH_TESTBED_HOST") == "" {
		host := s.Topology.Hosts[0].Name
		if c := s.Topology.WithRole(topo.Client); len(c) > 0 {
			host = c[0].Name
		}
		self, err := os.Executable()
		if err != nil {
			return false, err
		}
		inner, err := m.Command(cmd.Context(), s, host, append([]string{self}, os.Args[1:]...))
		if err != nil {
			return false, err
		}
		inner.Stdin, inner.Stdout, inner.Stderr = os.Stdin, cmd.OutOrStdout(), cmd.ErrOrStderr()
		fmt.Fprintf(cmd.ErrOrStderr(), "chaos: running the load on testbed host %s\n", host)
		err = inner.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return true, &exitError{code: ee.ExitCode(), err: fmt.Errorf("chaos on testbed %s: %w", s.Name, err)}
		}
		return true, err
	}
	st := &cluster.State{NameNode: os.Getenv("SMARTH_NAMENODE"), ResourceManager: os.Getenv("SMARTH_RESOURCEMANAGER")}
	if st.NameNode == "" {
		return false, fmt.Errorf("testbed %s has no namenode ($SMARTH_NAMENODE is empty on %s)", s.Name, os.Getenv("SMARTH_TESTBED_HOST"))
	}
	var cuts []testbed.Cut
	if tb.cuts != "" {
		for _, c := range strings.Split(tb.cuts, ",") {
			cut, err := testbed.ParseCut(c)
			if err != nil {
				return false, usageErr("--cuts: %v", err)
			}
			cuts = append(cuts, cut)
		}
	}
	o.Cluster = st
	o.Injector = &chaos.Partitioner{Net: m, Testbed: s, Cuts: cuts, MinCut: tb.minCut, MaxCut: tb.maxCut, Cluster: st}
	return false, nil
}
