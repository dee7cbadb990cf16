package chaos

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"smarth/internal/rpc/dfspb"
)

// Nearest-rank percentiles: p50 of 1..10 is the 5th value, p99 of a
// handful is the largest (no interpolated time no failover took), the
// input is not reordered, and none gives 0.
func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for _, s := range []int{7, 3, 10, 1, 9, 2, 8, 4, 6, 5} {
		ds = append(ds, time.Duration(s)*time.Second)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 5 * time.Second}, {90, 9 * time.Second}, {99, 10 * time.Second}, {100, 10 * time.Second}, {1, time.Second}, {0, time.Second}} {
		if got := Percentile(ds, c.p); got != c.want {
			t.Errorf("p%v of 1s..10s = %v, want %v", c.p, got, c.want)
		}
	}
	if ds[0] != 7*time.Second {
		t.Errorf("Percentile sorted its input in place: %v", ds)
	}
	if got := Percentile(nil, 99); got != 0 {
		t.Errorf("p99 of none = %v, want 0", got)
	}
	var many []time.Duration
	for i := 1; i <= 200; i++ {
		many = append(many, time.Duration(i)*time.Millisecond)
	}
	if got := Percentile(many, 99); got != 198*time.Millisecond {
		t.Errorf("p99 of 1..200ms = %v, want 198ms", got)
	}
}

// Failovers summarises namenode faults of an HA group by kind: a fault
// with no acknowledged write counts as unmeasured and stays out of the
// percentiles; faults of other daemons (no term) are not failovers. The
// report prints a line per kind with its p50, p99 and max.
func TestFailoversReport(t *testing.T) {
	s := time.Second
	faults := []Fault{
		{Kind: FaultKill, Daemon: "nn1", Term: 2, Elected: 1 * s, Failover: 2 * s},
		{Kind: FaultKill, Daemon: "nn2", Term: 3, Elected: 1 * s, Failover: 4 * s},
		{Kind: FaultKill, Daemon: "nn3", Term: 4, Elected: 3 * s, Failover: 3 * s},
		{Kind: FaultStop, Daemon: "nn1", Term: 5, Elected: 2 * s, Failover: 12 * s},
		{Kind: FaultStop, Daemon: "nn2", Term: 6, Elected: 2 * s},           // no write acknowledged
		{Kind: FaultKill, Daemon: "dn1", Failover: 50 * s, Elected: 50 * s}, // a datanode: no term
	}
	got := Failovers(faults)
	k, st := got[FaultKill], got[FaultStop]
	if k.Count != 3 || k.Unmeasured != 0 || k.WriteP50 != 3*s || k.WriteP99 != 4*s || k.WriteMax != 4*s || k.ElectP50 != 1*s || k.ElectMax != 3*s {
		t.Errorf("SIGKILL stats %+v", k)
	}
	// The failover without an acknowledged write counts at the probe's
	// limit, not left out.
	if st.Count != 2 || st.Unmeasured != 1 || st.NeverElected != 0 || st.WriteP50 != 12*s || st.WriteP99 != probeLimit || st.WriteMax != probeLimit || st.ElectP99 != 2*s {
		t.Errorf("SIGSTOP stats %+v", st)
	}
	if len(got) != 2 {
		t.Errorf("kinds %v; want SIGKILL and SIGSTOP only", got)
	}
	rep := &Report{Ops: map[string]*OpCount{}, Faults: faults, FailoverStats: got}
	if n := rep.FailedFailovers(); n != 1 {
		t.Errorf("FailedFailovers() = %d; want the 1 with no write acknowledged", n)
	}
	var b bytes.Buffer
	rep.Print(&b)
	out := b.String()
	for _, want := range []string{
		"failovers after SIGKILL of the active namenode: 3\n  sigkill to the first acknowledged write: p50 3s  p99 4s  max 4s",
		"failovers after SIGSTOP of the active namenode (hung host): 2 (1 with no write acknowledged within 3m0s)\n  sigstop to the first acknowledged write: p50 12s  p99 ≥3m0s  max ≥3m0s",
		"SIGSTOP + SIGCONT: nn1 1, nn2 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// measure times a failover from the signal to the first acknowledged
// probe write, not to the first attempt: a probe that fails until the
// group has a leader again (here: until 300ms after the signal) gives a
// failover of at least that long, after several attempts.
func TestMeasureTimesTheFirstAcknowledgedWrite(t *testing.T) {
	at := time.Now()
	attempts := 0
	k := &Killer{Probe: func(context.Context) error {
		attempts++
		if time.Since(at) < 300*time.Millisecond {
			return errors.New("no active namenode yet")
		}
		return nil
	}}
	f := Fault{At: at, Kind: FaultKill}
	<-k.measure(&f)
	if f.Failover < 300*time.Millisecond || attempts < 2 {
		t.Fatalf("failover %v after %d probe attempts; want at least 300ms, the time until a write was acknowledged", f.Failover, attempts)
	}
}

// The report splits each kind's failovers into the election's steps as
// the harness saw them (a higher term, a raft leader named, ACTIVE) and
// the client's share after them, each phase with its own percentiles,
// over the faults whose steps were all seen; the text report names the
// phases and the poll spacing that bounds their precision.
func TestFailoverPhases(t *testing.T) {
	ms := time.Millisecond
	faults := []Fault{
		{Kind: FaultKill, Daemon: "nn1", Term: 2, TermSeen: 600 * ms, LeaderSeen: 700 * ms, Elected: 750 * ms, Failover: 800 * ms, PollGap: 20 * ms},
		{Kind: FaultKill, Daemon: "nn2", Term: 3, TermSeen: 900 * ms, LeaderSeen: 1200 * ms, Elected: 1300 * ms, Failover: 1700 * ms, PollGap: 40 * ms},
		{Kind: FaultKill, Daemon: "nn3", Term: 4, Elected: 1000 * ms, Failover: 1100 * ms, PollGap: 30 * ms}, // steps not seen
	}
	k := Failovers(faults)[FaultKill]
	want := []PhaseStats{
		{Count: 2, P50: 600 * ms, P99: 900 * ms, Max: 900 * ms},
		{Count: 2, P50: 100 * ms, P99: 300 * ms, Max: 300 * ms},
		{Count: 2, P50: 50 * ms, P99: 100 * ms, Max: 100 * ms},
		{Count: 3, P50: 100 * ms, P99: 400 * ms, Max: 400 * ms},
	}
	if len(k.Phases) != len(want) {
		t.Fatalf("phases %+v; want %d", k.Phases, len(want))
	}
	for i, w := range want {
		w.Name = k.Phases[i].Name
		if k.Phases[i] != w || w.Name == "" {
			t.Errorf("phase %d = %+v, want %+v", i, k.Phases[i], w)
		}
	}
	if k.PollGapMax != 40*ms {
		t.Errorf("poll gap max %v, want 40ms", k.PollGapMax)
	}
	rep := &Report{Ops: map[string]*OpCount{}, Faults: faults, FailoverStats: Failovers(faults)}
	var b bytes.Buffer
	rep.Print(&b)
	for _, line := range []string{"up to 40ms apart", "higher term to a raft leader named (voting)", "p50 100ms  p99 300ms  max 300ms  (2)",
		"ACTIVE to the first acknowledged write (client)"} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
}

// A resumed ex-active is back only once it follows another member at a
// newer term. Right after SIGCONT it answers as a standby of no one at the
// term it was frozen in, and may still exit for its uncommitted edits: the
// 30-minute run of session 14 counted that answer as back, restarted the
// member at the next fault and so killed the active while only one other
// member was up (two faults at once; failovers of 2.5-5.7 s).
func TestRejoinedNeedsANewerTermAndAnotherLeader(t *testing.T) {
	st := func(state dfspb.HAState, term uint64, active string) *dfspb.GetHAStatusResponse {
		return &dfspb.GetHAStatusResponse{State: state, Term: term, ActiveId: active}
	}
	for _, c := range []struct {
		name string
		st   *dfspb.GetHAStatusResponse
		want bool
	}{
		{"just resumed: standby of no one at its old term", st(dfspb.HAState_STANDBY, 23, ""), false},
		{"standby of itself at its old term", st(dfspb.HAState_STANDBY, 23, "nn3"), false},
		{"newer term, no leader known yet", st(dfspb.HAState_STANDBY, 24, ""), false},
		{"still active at its old term", st(dfspb.HAState_ACTIVE, 23, "nn3"), false},
		{"follows the new active", st(dfspb.HAState_STANDBY, 24, "nn1"), true},
		{"no answer", nil, false},
	} {
		if got := rejoined(c.st, "nn3", 23); got != c.want {
			t.Errorf("%s: rejoined = %v, want %v", c.name, got, c.want)
		}
	}
}

// The load reads a failover probe's file but never renames or deletes
// it, so each probe's acknowledged write is there to verify at the end
// (and for TestChaosHANameNodeFaults's control to break).
func TestLoadLeavesProbesInPlace(t *testing.T) {
	r := &run{files: map[int]*ackedFile{
		1: {id: 1, path: "/chaos/failover/p000001", probe: true},
		2: {id: 2, path: "/chaos/files/f000002"},
	}, busy: map[int]bool{}}
	rng := rand.New(rand.NewPCG(1, 2))
	read := map[int]bool{}
	for range 200 {
		if f := r.checkout(rng, true); f == nil || f.probe {
			t.Fatalf("checkout for a rename or delete gave %+v; want the put's file, never the probe's", f)
		} else {
			r.checkin(f)
		}
		f := r.checkout(rng, false)
		read[f.id] = true
		r.checkin(f)
	}
	if !read[1] || !read[2] {
		t.Fatalf("checkouts for reads took files %v; want both, the probe's too", read)
	}
}

// Every rise of the term that no fault explains is counted: between one
// fault's election and the next fault, and after the last one. A split
// vote (a fault's election that took two terms) is the fault's own.
func TestElectionsWithoutFault(t *testing.T) {
	nn := func(term, elected uint64) Fault { return Fault{Kind: FaultKill, Term: term, ElectedTerm: elected} }
	dn := Fault{Kind: "SIGKILL", Daemon: "dn1"}
	for _, c := range []struct {
		name   string
		faults []Fault
		final  uint64
		want   []TermRise
	}{
		{"none", []Fault{nn(2, 3), nn(3, 5), dn, nn(5, 6)}, 6, nil},
		{"between faults", []Fault{nn(2, 3), nn(4, 5)}, 5, []TermRise{{After: 1, From: 3, To: 4}}},
		{"after a datanode fault", []Fault{nn(2, 3), dn, nn(5, 6)}, 0, []TermRise{{After: 1, From: 3, To: 5}}},
		{"after the last", []Fault{nn(2, 3), nn(3, 4)}, 7, []TermRise{{After: 2, From: 4, To: 7}}},
		{"final unknown", []Fault{nn(2, 3)}, 0, nil},
		{"no namenode fault", []Fault{dn}, 9, nil},
	} {
		if got := ElectionsWithoutFault(c.faults, c.final); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
