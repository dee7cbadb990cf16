package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"

	"smarth/internal/cluster"
)

// An Injector makes a run's faults, one at a time, each undone before the
// next: the run asks for one every Interval.
type Injector interface {
	// Inject makes one fault, holds it, undoes it, and says what it did.
	// An error ends the run (a daemon that would not start again); the
	// fault it returns with it is still reported.
	Inject(ctx context.Context, rng *rand.Rand) (Fault, error)
	// Settle undoes what may still be in force (a restart cut short, a
	// cut not healed) and waits until every datanode is live and the
	// namenode is out of safe mode, for verification.
	Settle(ctx context.Context) error
}

var (
	_ Injector = (*Killer)(nil)
	_ Injector = (*Partitioner)(nil)
)

// Killer SIGKILLs a random daemon of the local cluster in Home, waits,
// and starts it again with the cluster's own start machinery (the code
// behind `smarth cluster start`). One daemon is down at a time, so a file
// written with replication 3 always has a replica on a running datanode
// unless a pipeline had shrunk to one.
type Killer struct {
	Home    string
	Kinds   []string      // daemon kinds that may be killed
	MaxDown time.Duration // longest outage before the restart (at least 200ms)
	Logf    func(format string, a ...any)
	Warn    func(format string, a ...any) // what the report lists as warnings
	// NameNodeFaults are the faults a namenode of an HA cluster gets, in
	// turn (FaultKill, FaultStop; default both); the victim is always the
	// active. A single namenode is SIGKILLed.
	NameNodeFaults []string
	// Probe, if set, makes one write and returns nil once it is
	// acknowledged: what a failover is timed by (failover.go).
	Probe func(ctx context.Context) error
	// StopHold is how long a SIGSTOPped active stays frozen after another
	// member is active; default 10s.
	StopHold time.Duration

	nnFaults int // namenode faults made: the next kind in turn
}

func (k *Killer) Inject(ctx context.Context, rng *rand.Rand) (Fault, error) {
	st, err := cluster.LoadState(k.Home)
	if err != nil {
		return Fault{}, err
	}
	if st, err = k.revive(st); err != nil {
		return Fault{}, err
	}
	victim, ok := pickVictim(rng, st, k.Kinds)
	if !ok {
		return Fault{}, fmt.Errorf("chaos: no running daemon of kinds %v to kill", k.Kinds)
	}
	if victim.Kind == "namenode" && st.HA() {
		return k.injectNameNode(ctx, rng, st)
	}
	f := Fault{At: time.Now(), Kind: "SIGKILL", Daemon: victim.Name, PID: victim.PID}
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		return Fault{}, fmt.Errorf("chaos: kill %s (pid %d): %w", victim.Name, victim.PID, err)
	}
	k.Logf("SIGKILL %s (pid %d)", victim.Name, victim.PID)
	for victim.Running() { // a zombie counts as gone: pidRuns checks the command line
		time.Sleep(20 * time.Millisecond)
	}
	// The pause is the outage under test, not a wait for a condition.
	time.Sleep(outage(rng, 200*time.Millisecond, k.MaxDown))
	if err := k.restart(victim.Name, &f); err != nil {
		return f, err
	}
	f.Down = time.Since(f.At)
	return f, nil
}

// Settle starts every daemon that is not running (a restart that was cut
// short) and waits until the namenode has every datanode live and is out
// of safe mode.
func (k *Killer) Settle(ctx context.Context) error {
	st, err := cluster.LoadState(k.Home)
	if err != nil {
		return err
	}
	var hosts []string
	for _, d := range st.Daemons {
		if !d.Running() {
			k.Warn("%s was not running after the load; starting it", d.Name)
			if _, err := cluster.Start(ctx, d.Name, cluster.ControlOptions{Home: k.Home}); err != nil {
				return fmt.Errorf("chaos: start %s for verification: %w", d.Name, err)
			}
		}
		if d.Kind == "datanode" {
			hosts = append(hosts, d.Hostname)
		}
	}
	st, err = cluster.LoadState(k.Home)
	if err != nil {
		return err
	}
	return cluster.WaitDataNodes(ctx, st, hosts)
}

// outage is uniform in [lo, max(hi, lo)].
func outage(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	hi = max(hi, lo)
	return lo + time.Duration(rng.Int64N(int64(hi-lo)+1))
}

// revive starts, before the next fault, any daemon that exited on its own
// since the last one, as a supervisor would (systemd, or an operator's
// `smarth cluster start`), and reports it as a warning: one fault at a
// time must stay one daemon down at a time. The case in point is an HA
// group's active deposed by an election it did not lose to a fault (a
// loaded machine missing heartbeats) while it held uncommitted edits: it
// exits so that its restart reloads the group's state, as HDFS's active
// does when it loses its journal quorum.
func (k *Killer) revive(st *cluster.State) (*cluster.State, error) {
	revived := false
	for _, d := range st.Daemons {
		if d.Running() {
			continue
		}
		k.Warn("%s (pid %d) had exited on its own before the next fault (see %s); starting it", d.Name, d.PID, d.LogFile)
		f := Fault{Kind: "restart", Daemon: d.Name}
		if err := k.restart(d.Name, &f); err != nil {
			return st, err
		}
		revived = true
	}
	if !revived {
		return st, nil
	}
	return cluster.LoadState(k.Home)
}
