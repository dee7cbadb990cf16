package chaos

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/rpc/dfspb"
	"smarth/internal/sigstop"
)

// Namenode faults on an HA cluster (issue 28). The victim is always the
// active namenode, found by asking every member for its HA status: a
// standby's death costs the clients nothing. Two faults, in turn:
//
//   - SIGKILL of the active process (a crashed namenode), restarted after
//     the outage as any killed daemon is;
//   - SIGSTOP of the active (a hung host: the process holds its sockets and
//     answers nothing), held until another member is active and then for
//     StopHold (default 10s), then SIGCONT. Resumed, it must step down: it may stay a
//     standby, or exit non-zero if it held edits the group never
//     committed (then it is restarted). Anything it acknowledged after
//     the others elected would be a lost operation, which the run's
//     verification reports.
//
// For each, the run measures the failover as a client sees it: from the
// signal to the first write acknowledged after it (Killer.Probe, an empty
// file created by a client that was attached to the victim just before),
// and, as the server side's share, from the signal to another member
// answering ACTIVE.

// Namenode fault kinds (Options.NameNodeFaults).
const (
	FaultKill = "SIGKILL"
	FaultStop = "SIGSTOP"
)

// injectNameNode makes the next namenode fault of k.NameNodeFaults on the
// HA cluster in st.
func (k *Killer) injectNameNode(ctx context.Context, rng *rand.Rand, st *cluster.State) (Fault, error) {
	actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, m, err := cluster.WaitActive(actx, st)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return Fault{}, nil // the load ended first: no fault made
		}
		return Fault{}, fmt.Errorf("chaos: find the active namenode: %w", err)
	}
	victim, ok := st.Daemon(m.Name)
	if !ok {
		return Fault{}, fmt.Errorf("chaos: the active namenode %s is not in the state file", m.Name)
	}
	kinds := k.NameNodeFaults
	if len(kinds) == 0 {
		kinds = []string{FaultKill, FaultStop}
	}
	kind := kinds[k.nnFaults%len(kinds)]
	k.nnFaults++
	// The probe's client talks to the active now, as every client of the
	// load does: its first call after the fault goes to the victim.
	if k.Probe != nil {
		if err := k.warmProbe(ctx); err != nil {
			if ctx.Err() != nil {
				return Fault{}, nil // the load ended first: no fault made
			}
			return Fault{}, err
		}
	}
	f := Fault{At: time.Now(), Kind: kind, Daemon: victim.Name, PID: victim.PID, Term: m.HA.GetTerm()}
	sig := syscall.SIGKILL
	if kind == FaultStop {
		sig = syscall.SIGSTOP
	}
	if err := syscall.Kill(victim.PID, sig); err != nil {
		return Fault{}, fmt.Errorf("chaos: %s %s (pid %d): %w", kind, victim.Name, victim.PID, err)
	}
	k.Logf("%s the active namenode %s (pid %d, term %d)", kind, victim.Name, victim.PID, f.Term)
	if kind == FaultStop {
		// The hung host counts from when the victim is stopped (see
		// package sigstop): a write it served before is not a failover.
		stopped, err := sigstop.Await(victim.PID, time.Minute)
		if err != nil {
			k.Warn("SIGSTOP of %s: %v; timing the failover from the signal", victim.Name, err)
		} else {
			f.StopLag = stopped.Sub(f.At)
			if f.StopLag > 5*time.Millisecond {
				k.Logf("%s stopped %s after the SIGSTOP", victim.Name, f.StopLag.Round(time.Millisecond))
			}
		}
	}
	probed := k.measure(&f)
	others := *st
	others.Daemons = slices.DeleteFunc(slices.Clone(st.Daemons), func(d cluster.Daemon) bool { return d.Name == victim.Name })
	switch kind {
	case FaultKill:
		for victim.Running() {
			time.Sleep(20 * time.Millisecond) // the kernel reaping it: no event to wait on for a non-child
		}
		k.waitElected(ctx, &others, &f)
		time.Sleep(outage(rng, 200*time.Millisecond, k.MaxDown)) // the outage under test
		<-probed
		if err := k.restart(victim.Name, &f); err != nil {
			return f, err
		}
	case FaultStop:
		// Held until the others elect, then for the outage: the frozen
		// active must come back to a group that has moved on.
		k.waitElected(ctx, &others, &f)
		time.Sleep(cmp.Or(k.StopHold, defaultStopHold)) // the hung host under test
		if err := syscall.Kill(victim.PID, syscall.SIGCONT); err != nil {
			return f, fmt.Errorf("chaos: SIGCONT %s (pid %d): %w", victim.Name, victim.PID, err)
		}
		k.Logf("SIGCONT %s (pid %d)", victim.Name, victim.PID)
		<-probed
		if err := k.awaitResumed(victim, &f); err != nil {
			return f, err
		}
	}
	f.Down = time.Since(f.At)
	return f, nil
}

// warmProbe makes one acknowledged probe write, so the probe's client is
// attached to the active; a failure (the group between leaders after the
// last fault) is retried for up to a minute.
func (k *Killer) warmProbe(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		err := k.Probe(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("chaos: no write acknowledged before a namenode fault: %w", err)
		}
		time.Sleep(100 * time.Millisecond) // the group between leaders: a retry
	}
}

// measure starts the probe loop of fault f: writes one after another
// until one is acknowledged; f.Failover is the time from the signal (a
// SIGSTOP: from when it was in force, f.StopLag after it) to that
// acknowledgement. The channel is closed when it is done (a probe
// that is not acknowledged within probeLimit leaves f.Failover zero and
// is reported as unmeasured).
func (k *Killer) measure(f *Fault) <-chan struct{} {
	done := make(chan struct{})
	if k.Probe == nil {
		close(done)
		return done
	}
	at := f.At.Add(f.StopLag)
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), probeLimit)
		defer cancel()
		for ctx.Err() == nil {
			if err := k.Probe(ctx); err == nil {
				f.Failover = time.Since(at)
				return
			}
			time.Sleep(10 * time.Millisecond) // the client has waited its own failover rounds already
		}
	}()
	return done
}

// defaultStopHold is how long a SIGSTOPped active stays frozen after
// another member is active (Killer.StopHold): long enough to tell a client
// that fails over on its own from one that waits for the hung namenode to
// answer, which sees its write acknowledged only after the SIGCONT.
const defaultStopHold = 10 * time.Second

// probeLimit bounds one failover measurement.
const probeLimit = 3 * time.Minute

// waitElected polls the members other than the victim until one says
// ACTIVE at a term above the victim's, and records when (f.Elected).
//
// It outlives the load phase (ctx is the load's only for the record): a
// fault made just before the load ends is still a failover to time.
//
// On the way it records the election's steps as the polls see them
// (Fault.TermSeen, LeaderSeen, PollGap).
func (k *Killer) waitElected(_ context.Context, others *cluster.State, f *Fault) {
	ctx, cancel := context.WithTimeout(context.Background(), probeLimit)
	defer cancel()
	origin := f.At.Add(f.StopLag)
	last := origin
	for ctx.Err() == nil {
		sts, err := cluster.HAStatus(ctx, others)
		now := time.Since(origin)
		f.PollGap = max(f.PollGap, time.Since(last))
		last = time.Now()
		if err == nil {
			for _, m := range sts {
				if m.Err != nil || m.HA.GetTerm() <= f.Term {
					continue
				}
				if f.TermSeen == 0 {
					f.TermSeen = now
				}
				if f.LeaderSeen == 0 && m.HA.GetActiveId() != "" {
					f.LeaderSeen = now
				}
			}
			for _, m := range sts {
				if m.Err == nil && m.HA.GetState() == dfspb.HAState_ACTIVE && m.HA.GetTerm() > f.Term {
					f.Elected, f.NewActive, f.ElectedTerm = now, m.Name, m.HA.GetTerm()
					k.Logf("%s is active (term %d) %s after the %s (term above %d seen after %s, a raft leader named after %s; polls up to %s apart)",
						m.Name, m.HA.GetTerm(), ms(f.Elected), f.Kind, f.Term, ms(f.TermSeen), ms(f.LeaderSeen), ms(f.PollGap))
					return
				}
			}
		}
		time.Sleep(10 * time.Millisecond) // polling the members' status: no event to wait on
	}
	k.Warn("%s of %s: no other namenode became active within %s", f.Kind, f.Daemon, probeLimit)
}

// awaitResumed waits until a resumed ex-active has stepped down (standby
// of another member) or exited; one that exited is started again.
// Until it has rejoined (rejoined), the next fault waits: a fault made
// while it is still deciding whether to exit would be two at once.
func (k *Killer) awaitResumed(victim *cluster.Daemon, f *Fault) error {
	deadline := time.Now().Add(time.Minute)
	for {
		if !victim.Running() {
			f.Resumed = "exited (it held edits the group had not committed) and was restarted"
			k.Logf("%s exited after SIGCONT; restarting it", victim.Name)
			return k.restart(victim.Name, f)
		}
		st, err := cluster.LoadState(k.Home)
		if err != nil {
			return err
		}
		one := *st
		one.Daemons = []cluster.Daemon{*victim}
		ms, err := cluster.HAStatus(context.Background(), &one)
		if err == nil && len(ms) == 1 && ms[0].Err == nil && rejoined(ms[0].HA, victim.Name, f.Term) {
			f.Resumed = fmt.Sprintf("standby of %s at term %d", ms[0].HA.GetActiveId(), ms[0].HA.GetTerm())
			k.Logf("%s resumed as a %s", victim.Name, f.Resumed)
			return nil
		}
		if time.Now().After(deadline) {
			what := "no answer"
			if err == nil && len(ms) == 1 {
				what = ms[0].Role()
				if ms[0].Err != nil {
					what = ms[0].Err.Error()
				}
			}
			k.Warn("%s resumed after SIGSTOP is not a standby after a minute (%s)", victim.Name, what)
			f.Resumed = "not a standby after a minute: " + what
			return nil
		}
		time.Sleep(50 * time.Millisecond) // polling its status: no event to wait on
	}
}

// rejoined says whether a resumed ex-active, frozen while active at term,
// has rejoined the group: a standby that follows another member at a
// newer term. Right after SIGCONT it still answers at its old term with
// no leader known, before it has heard from the new leader; one that held
// uncommitted edits exits a moment later (and is restarted), so that
// answer is not yet "back".
func rejoined(st *dfspb.GetHAStatusResponse, victim string, term uint64) bool {
	return st.GetState() == dfspb.HAState_STANDBY && st.GetTerm() > term &&
		st.GetActiveId() != "" && st.GetActiveId() != victim
}

// restart starts a killed daemon again with the cluster's start machinery,
// retrying a few times; failed attempts are kept in f.StartErrs.
func (k *Killer) restart(name string, f *Fault) error {
	// Restart even when the load is over: verification wants every
	// daemon back, and a start cut short by ctx would leave it down.
	for attempt := 1; ; attempt++ {
		sctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		_, err := cluster.Start(sctx, name, cluster.ControlOptions{Home: k.Home, ReadyTimeout: 2 * time.Minute})
		cancel()
		if err == nil {
			return nil
		}
		f.StartErrs = append(f.StartErrs, err.Error())
		k.Logf("start %s, attempt %d: %v", name, attempt, err)
		if attempt == 5 {
			return fmt.Errorf("chaos: %s would not start again after %s: %v", name, f.Kind, err)
		}
		// A daemon that half started (its ready wait timed out) may
		// still run; stop it so the next attempt starts afresh.
		_, _ = cluster.Stop(name, cluster.ControlOptions{Home: k.Home, StopGrace: 5 * time.Second})
		time.Sleep(2 * time.Second) // back-off between start attempts
	}
}

// FailoverStats summarises the failovers of one fault kind: how many, how
// many the probe never saw end, and percentiles of the time from the
// signal to the first acknowledged write (Write*) and to another member
// answering ACTIVE (Elect*). A failover not seen to end within the probe's
// limit (Unmeasured, NeverElected) counts in the percentiles at that
// limit: they are then lower bounds, printed with "≥".
type FailoverStats struct {
	Count        int           `json:"count"`
	Unmeasured   int           `json:"unmeasured"`    // no write acknowledged within probeLimit
	NeverElected int           `json:"never_elected"` // no other member active within probeLimit
	WriteP50     time.Duration `json:"write_p50_ns"`
	WriteP99     time.Duration `json:"write_p99_ns"`
	WriteMax     time.Duration `json:"write_max_ns"`
	ElectP50     time.Duration `json:"elect_p50_ns"`
	ElectP99     time.Duration `json:"elect_p99_ns"`
	ElectMax     time.Duration `json:"elect_max_ns"`
	// Phases split the time to the first write where it went, in order
	// (failoverPhases), over the faults whose steps were all seen.
	Phases []PhaseStats `json:"phases,omitempty"`
	// PollGapMax: the election's steps are seen by polls at most this
	// far apart (Fault.PollGap), so each phase is known to about that.
	PollGapMax time.Duration `json:"poll_gap_max_ns"`
}

// PhaseStats are the percentiles of one phase of the failovers.
type PhaseStats struct {
	Name  string        `json:"name"`
	Count int           `json:"count"`
	P50   time.Duration `json:"p50_ns"`
	P99   time.Duration `json:"p99_ns"`
	Max   time.Duration `json:"max_ns"`
}

// failoverPhases are the steps of a failover as the harness sees them;
// each phase's length is f's, or ok false when a step was not seen.
var failoverPhases = []struct {
	name string
	of   func(f Fault) (time.Duration, bool)
}{
	{"fault to a higher term seen (heartbeat timeout, pre-vote)", func(f Fault) (time.Duration, bool) {
		return f.TermSeen, f.TermSeen > 0
	}},
	{"higher term to a raft leader named (voting)", func(f Fault) (time.Duration, bool) {
		return f.LeaderSeen - f.TermSeen, f.TermSeen > 0 && f.LeaderSeen > 0
	}},
	{"raft leader to ACTIVE (barrier, takeover)", func(f Fault) (time.Duration, bool) {
		return f.Elected - f.LeaderSeen, f.LeaderSeen > 0 && f.Elected > 0
	}},
	{"ACTIVE to the first acknowledged write (client)", func(f Fault) (time.Duration, bool) {
		return f.Failover - f.Elected, f.Elected > 0 && f.Failover > 0
	}},
}

// Failovers summarises the namenode faults of an HA run by kind
// (SIGKILL, SIGSTOP); kinds with none are absent.
func Failovers(faults []Fault) map[string]FailoverStats {
	writes, elects := map[string][]time.Duration{}, map[string][]time.Duration{}
	phases := map[string][][]time.Duration{} // kind -> phase -> lengths
	out := map[string]FailoverStats{}
	for _, f := range faults {
		if f.Term == 0 {
			continue // not a namenode fault of an HA group
		}
		s := out[f.Kind]
		s.Count++
		// A failover the probe never saw end counts at the probe's
		// limit, a lower bound of its time, not left out: a run whose
		// group had no active for minutes must not report a p99 of
		// seconds (one did, before this).
		if f.Failover > 0 {
			writes[f.Kind] = append(writes[f.Kind], f.Failover)
		} else {
			s.Unmeasured++
			writes[f.Kind] = append(writes[f.Kind], probeLimit)
		}
		if f.Elected > 0 {
			elects[f.Kind] = append(elects[f.Kind], f.Elected)
		} else {
			s.NeverElected++
			elects[f.Kind] = append(elects[f.Kind], probeLimit)
		}
		if s.Phases == nil {
			s.Phases = make([]PhaseStats, len(failoverPhases))
			phases[f.Kind] = make([][]time.Duration, len(failoverPhases))
		}
		for i, p := range failoverPhases {
			if d, ok := p.of(f); ok {
				phases[f.Kind][i] = append(phases[f.Kind][i], d)
			}
		}
		s.PollGapMax = max(s.PollGapMax, f.PollGap)
		out[f.Kind] = s
	}
	for kind, s := range out {
		s.WriteP50, s.WriteP99, s.WriteMax = Percentile(writes[kind], 50), Percentile(writes[kind], 99), Percentile(writes[kind], 100)
		s.ElectP50, s.ElectP99, s.ElectMax = Percentile(elects[kind], 50), Percentile(elects[kind], 99), Percentile(elects[kind], 100)
		for i, p := range failoverPhases {
			ds := phases[kind][i]
			s.Phases[i] = PhaseStats{Name: p.name, Count: len(ds), P50: Percentile(ds, 50), P99: Percentile(ds, 99), Max: Percentile(ds, 100)}
		}
		out[kind] = s
	}
	return out
}

// Percentile is the nearest-rank p-th percentile of ds (0 for none): the
// smallest value at least p% of the values are at or below. With few
// values the p99 is the maximum, as it should be: no interpolation
// invents a time no failover took.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[min(max(rank, 1), len(s))-1]
}

// printFailovers writes one line per namenode fault kind of an HA run.
func printFailovers(w io.Writer, stats map[string]FailoverStats) {
	kinds := make([]string, 0, len(stats))
	for k := range stats {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		s := stats[k]
		what := map[string]string{FaultKill: "SIGKILL of the active namenode", FaultStop: "SIGSTOP of the active namenode (hung host)"}[k]
		fmt.Fprintf(w, "failovers after %s: %d", what, s.Count)
		if s.Unmeasured > 0 {
			fmt.Fprintf(w, " (%d with no write acknowledged within %s)", s.Unmeasured, probeLimit)
		}
		fmt.Fprintf(w, "\n  %s to the first acknowledged write: p50 %s  p99 %s  max %s\n", strings.ToLower(k), atLeast(s.WriteP50), atLeast(s.WriteP99), atLeast(s.WriteMax))
		fmt.Fprintf(w, "  %s to another namenode active:     p50 %s  p99 %s  max %s\n", strings.ToLower(k), atLeast(s.ElectP50), atLeast(s.ElectP99), atLeast(s.ElectMax))
		if s.PollGapMax > 0 {
			fmt.Fprintf(w, "  where the time went (the others' status polled, up to %s apart; a phase may be negative by as much):\n", ms(s.PollGapMax))
			for _, p := range s.Phases {
				fmt.Fprintf(w, "    %-52s p50 %s  p99 %s  max %s  (%d)\n", p.Name, ms(p.P50), ms(p.P99), ms(p.Max), p.Count)
			}
		}
	}
}

func ms(d time.Duration) string { return d.Round(time.Millisecond).String() }

// atLeast is ms, marked as a lower bound when it is the probe's limit (a
// failover not seen to end).
func atLeast(d time.Duration) string {
	if d >= probeLimit {
		return "≥" + ms(d)
	}
	return ms(d)
}

// FailedFailovers counts the namenode faults after which the probe saw no
// write acknowledged within its limit: the HA group's promise of a
// failover in seconds broken, whatever was or was not lost.
func (r *Report) FailedFailovers() int {
	n := 0
	for _, s := range r.FailoverStats {
		n += s.Unmeasured
	}
	return n
}

// newProbe is the client the failovers are timed with: a client of the
// whole group like the load's, with the directory its files go to.
func (r *run) newProbe(ctx context.Context) (*client.FileSystem, error) {
	fsys, err := r.newClient("")
	if err != nil {
		return nil, err
	}
	mctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := fsys.Mkdir(mctx, path.Join(r.o.Dir, "failover"), 0o755, true); err != nil {
		fsys.Close()
		return nil, fmt.Errorf("chaos: mkdir for the failover probe: %w", err)
	}
	return fsys, nil
}

// probe returns Killer.Probe for the run: each call creates a new empty
// file, as HDFS's failover measurement's client creates files in a loop.
// An acknowledged one is a promise like any put's (verified at the end),
// so a failover that loses the probe's own write is reported too.
func (r *run) probe(fsys *client.FileSystem) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		id := r.newID()
		p := path.Join(r.o.Dir, "failover", fmt.Sprintf("p%06d", id))
		err := writeFile(ctx, fsys, p, nil)
		r.count("probe", err)
		if err != nil {
			return err
		}
		f := &ackedFile{id: id, path: p, sum: sha256.Sum256(nil), probe: true, by: fsys}
		f.hist.add("put", p+" (0 bytes, failover probe)", nil)
		r.mu.Lock()
		r.files[id] = f
		r.mu.Unlock()
		return nil
	}
}

// TermRise is a rise of the HA group's term that no fault made: between
// the election that followed one fault (After, at term From) and the
// next fault (or the end of the run), the active's term went up to To.
type TermRise struct {
	After    int    // 1-based index of the fault whose election came before
	From, To uint64 // terms
}

func (t TermRise) String() string {
	return fmt.Sprintf("after fault %d: term %d to %d with no fault", t.After, t.From, t.To)
}

// ElectionsWithoutFault finds the elections no namenode fault made. Each
// namenode fault hits the active of its term (Fault.Term) and ends when
// another member answers ACTIVE at ElectedTerm; the next fault's victim
// must still be at that term, and so must the active after the run
// (final; 0: unknown). A term above it means the group elected again on
// its own: load starving a leader's heartbeats past the timeout, a
// restarted member disrupting the group, a leader stepping down. Such
// elections cost the clients a failover that no fault explains, so a run
// that claims faults are the only cause of failovers must count none.
// Faults whose terms were not both seen are skipped.
func ElectionsWithoutFault(faults []Fault, final uint64) []TermRise {
	var out []TermRise
	prev, after := uint64(0), 0
	for i, f := range faults {
		if f.Term == 0 {
			continue // not a namenode fault of an HA group
		}
		if prev > 0 && f.Term > prev {
			out = append(out, TermRise{After: after, From: prev, To: f.Term})
		}
		prev, after = f.ElectedTerm, i+1
	}
	if prev > 0 && final > prev {
		out = append(out, TermRise{After: after, From: prev, To: final})
	}
	return out
}

// countElections asks for the active's term once the daemons are back
// and counts the elections no fault made (Report.UncausedElections).
func (r *run) countElections(ctx context.Context) {
	if !r.st.HA() || !slices.ContainsFunc(r.rep.Faults, func(f Fault) bool { return f.Term > 0 }) {
		return
	}
	st := r.st
	if fresh, err := cluster.LoadState(r.o.Home); err == nil && fresh.HA() {
		st = fresh // restarted members have new pids
	}
	actx, cancel := context.WithTimeout(ctx, time.Minute)
	_, m, err := cluster.WaitActive(actx, st)
	cancel()
	if err != nil {
		r.warn("the active's term after the load: %v; elections after the last fault not counted", err)
	} else {
		r.rep.FinalTerm = m.HA.GetTerm()
	}
	r.rep.UncausedElections = ElectionsWithoutFault(r.rep.Faults, r.rep.FinalTerm)
	for _, e := range r.rep.UncausedElections {
		r.warn("an election no fault made: %s", e)
	}
}
