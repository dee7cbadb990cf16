package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
)

// Options describe a chaos run. Zero values take the defaults named.
type Options struct {
	Home     string        // the local cluster's home; default cluster.Home()
	Duration time.Duration // how long load and faults run; default 5m
	// Interval is the time between a restarted daemon being ready and
	// the next kill; default 20s.
	Interval time.Duration
	// MaxDown bounds how long a killed daemon stays down before its
	// restart (uniform in [0.2s, MaxDown]); default Interval/2.
	MaxDown time.Duration
	Seed    uint64 // load and fault choices; default from the clock
	Workers int    // file-load goroutines; default 3
	// ObserverReads: every file worker but the first reads through the
	// standbys of an HA cluster (client.Config.ObserverReads), and calls
	// Msync before it reads a file another client wrote or renamed last,
	// as a program that hands paths between clients must. A read that
	// misses a file then is a loss like any other.
	ObserverReads bool
	// Jobs runs a job worker (wordcount and teragen through the resource
	// manager) when the cluster has one; NoJobs turns it off.
	NoJobs bool
	// Kinds are the daemon kinds that may be killed; default namenode,
	// datanode, nodemanager.
	Kinds []string
	// NameNodeFaults are the faults of an HA cluster's active namenode,
	// made in turn: FaultKill, FaultStop (default both).
	NameNodeFaults []string
	// StopHold is how long a SIGSTOPped active namenode stays frozen
	// after another is active; default 10s.
	StopHold time.Duration
	// Dir is the DFS directory the run works in; default
	// /chaos/<start time>. It must not exist.
	Dir         string
	MaxFileSize int64 // largest put; default 3 MiB
	// MaxFiles bounds the acknowledged files kept: beyond it the load
	// deletes files too (an acknowledged delete is verified as gone), so
	// a long run's data stays bounded. Default 300.
	MaxFiles int
	// KeepJobs is how many succeeded jobs' outputs are kept for the final
	// verification; older ones are verified when they fall out and then
	// deleted. Default 20.
	KeepJobs int
	// Settle bounds the wait, after the load, for every daemon to be back
	// and every acknowledged file to be readable; default 5m.
	Settle time.Duration
	Out    io.Writer // progress lines; default discard
	// Stop, when closed, ends the load early; verification still runs
	// (smarth chaos closes it on the first Ctrl-C). Cancelling Run's
	// context instead abandons the run.
	Stop <-chan struct{}

	// Cluster is the cluster the load talks to (its namenode and resource
	// manager, and where its clients' credentials come from); default the
	// local cluster in Home.
	Cluster *cluster.State
	// Injector makes the faults; default a Killer of the local cluster in
	// Home (SIGKILL and restart of daemons of Kinds).
	Injector Injector

	// AfterFault, if set, runs after each fault is undone, before the
	// next. Tests use it to make an election no fault caused (the
	// control of Report.UncausedElections).
	AfterFault func(ctx context.Context, f Fault) error

	// BeforeVerify, if set, runs between the end of the load and the
	// verification with the run's client and the promises to be checked.
	// Tests use it to break a promise on purpose (the control that shows
	// verification can fail).
	BeforeVerify func(ctx context.Context, fs *client.FileSystem, p Promises) error
}

// Promises are what a run's verification will check, by kind, as paths.
type Promises struct {
	Files      []string    // acknowledged puts under their certain names
	Renamed    [][2]string // acknowledged renames still in force: {old, new}; old must be absent, new whole
	Deleted    []string    // acknowledged deletes: must stay absent
	JobOutputs []string    // succeeded jobs' output directories
}

func (o *Options) setDefaults() {
	if o.Home == "" {
		o.Home = cluster.Home()
	}
	if o.Duration <= 0 {
		o.Duration = 5 * time.Minute
	}
	if o.Interval <= 0 {
		o.Interval = 20 * time.Second
	}
	if o.MaxDown <= 0 {
		o.MaxDown = o.Interval / 2
	}
	o.MaxDown = max(o.MaxDown, 200*time.Millisecond)
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.Workers <= 0 {
		o.Workers = 3
	}
	if len(o.Kinds) == 0 {
		o.Kinds = []string{"namenode", "datanode", "nodemanager"}
	}
	if o.Dir == "" {
		o.Dir = "/chaos/" + time.Now().UTC().Format("20060102-150405")
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = 3 << 20
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = 300
	}
	if o.KeepJobs <= 0 {
		o.KeepJobs = 20
	}
	if o.Settle <= 0 {
		o.Settle = 5 * time.Minute
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
}

// OpCount counts one kind of operation.
type OpCount struct {
	OK, Failed int
	// Errors are the first MaxOpErrors failures of the kind, with the
	// time each happened: what a failed op met (a failover the client
	// gave up on, a full disk), which the counts alone do not say.
	Errors []string `json:",omitempty"`
}

// MaxOpErrors bounds OpCount.Errors.
const MaxOpErrors = 8

// Fault is one fault made and undone: a daemon killed and started again
// (Kind "SIGKILL"), or a host or rack cut off the network and healed
// (Kind "partition").
type Fault struct {
	At     time.Time
	Kind   string // "SIGKILL" or "partition"
	Daemon string // the daemon killed, or the cut ("host dn1", "rack rack-b")
	PID    int
	Down   time.Duration // from the kill (the cut) to ready (healed) again
	// DeclaredDead are the datanodes the namenode declared dead during a
	// partition.
	DeclaredDead []string
	StartErrs    []string // failed start attempts

	// A namenode fault of an HA cluster (failover.go): the victim was
	// the active at Term; Elected is when another member (NewActive)
	// answered ACTIVE, Failover when the first write after the signal
	// was acknowledged (0: none within the probe's limit); Resumed is
	// what a SIGSTOPped one did after SIGCONT.
	Term      uint64
	Elected   time.Duration
	Failover  time.Duration
	NewActive string
	// ElectedTerm is NewActive's term when it answered ACTIVE.
	ElectedTerm uint64
	Resumed     string
	// StopLag: a SIGSTOP was in force (every thread of the victim
	// stopped) this long after the signal (package sigstop); Elected and
	// Failover of a SIGSTOP count from then.
	StopLag time.Duration
	// The election's steps as the harness's status polls of the other
	// members saw them (waitElected), from the same origin as Elected:
	// TermSeen when one first said a term above Term (a candidate's
	// election began: raft's pre-vote does not raise it), LeaderSeen when
	// one first named a raft leader at such a term (voting over; that
	// leader still has to commit its barrier and take over before it
	// answers ACTIVE). Each is seen at the end of a poll round, so it is
	// late by up to PollGap, the longest round from one poll's end to
	// the next's (a new connection to each member per round). 0: not
	// seen before ACTIVE (a round saw both at once gets the same time).
	TermSeen, LeaderSeen, PollGap time.Duration
}

// Report is what a run did and found.
type Report struct {
	Dir     string
	Seed    uint64
	Elapsed time.Duration // load phase
	Ops     map[string]*OpCount
	Faults  []Fault
	Acked   int    // acknowledged operations checked (kept or lost)
	Lost    []Loss // acknowledged operations whose promise was broken
	// ObserverServed and ObserverToActive count the observer-read
	// workers' namespace reads (Options.ObserverReads) a standby served
	// and those that went to the active instead.
	ObserverServed, ObserverToActive int64
	// Unverifiable are promises that could be neither kept nor broken:
	// an acknowledged put found absent after a delete of it failed in a
	// way that leaves open whether the namenode applied it.
	Unverifiable []Loss
	Warnings     []string // things worth a look that lose nothing
	// Every replica of every block of the acknowledged files, each read
	// from its own datanode after the load: BlocksChecked blocks,
	// ReplicasChecked replicas, and the blocks whose replicas differ
	// from one another or from the acknowledged bytes.
	BlocksChecked, ReplicasChecked int
	Diverged                       []string
	// FailoverStats are the namenode failovers of an HA cluster by fault
	// kind (Failovers of Faults), filled in at the end of the load.
	FailoverStats map[string]FailoverStats `json:",omitempty"`
	// FinalTerm is the active namenode's term once every daemon was back
	// after the load (HA clusters with namenode faults; 0: not asked).
	// UncausedElections are the elections no fault made
	// (ElectionsWithoutFault of Faults and FinalTerm).
	FinalTerm         uint64     `json:",omitempty"`
	UncausedElections []TermRise `json:",omitempty"`
}

// faultSummary counts faults by kind and target: "SIGKILL + restart:
// datanode-1 2, namenode 1; partition + heal: host dn2 1".
func faultSummary(fs []Fault) string {
	by := map[string]map[string]int{}
	for _, f := range fs {
		k := f.Kind
		if k == "" {
			k = "SIGKILL"
		}
		if by[k] == nil {
			by[k] = map[string]int{}
		}
		by[k][f.Daemon]++
	}
	label := map[string]string{"SIGKILL": "SIGKILL + restart", "SIGSTOP": "SIGSTOP + SIGCONT", "partition": "partition + heal"}
	var kinds []string
	for _, k := range []string{"SIGKILL", "SIGSTOP", "partition"} {
		if by[k] == nil {
			continue
		}
		var parts []string
		for d, n := range by[k] {
			parts = append(parts, fmt.Sprintf("%s %d", d, n))
		}
		sort.Strings(parts)
		kinds = append(kinds, label[k]+": "+strings.Join(parts, ", "))
	}
	if len(kinds) == 0 {
		return "none"
	}
	return strings.Join(kinds, "; ")
}

// OpsDone is the number of operations attempted.
func (r *Report) OpsDone() int {
	n := 0
	for _, c := range r.Ops {
		n += c.OK + c.Failed
	}
	return n
}

// Print writes the summary: ops by kind, faults by daemon, acknowledged
// operations and the lost ones.
func (r *Report) Print(w io.Writer) {
	fmt.Fprintf(w, "chaos run in %s (seed %d), load for %s\n", r.Dir, r.Seed, r.Elapsed.Round(time.Second))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "op\tok\tfailed")
	kinds := make([]string, 0, len(r.Ops))
	for k := range r.Ops {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", k, r.Ops[k].OK, r.Ops[k].Failed)
	}
	tw.Flush()
	for _, k := range kinds {
		if errs := r.Ops[k].Errors; len(errs) > 0 {
			fmt.Fprintf(w, "first failed %s ops (of %d):\n", k, r.Ops[k].Failed)
			for _, e := range errs {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
	}
	fmt.Fprintf(w, "ops done: %d\n", r.OpsDone())
	if r.ObserverServed+r.ObserverToActive > 0 {
		fmt.Fprintf(w, "observer reads: %d served by standbys, %d sent to the active\n", r.ObserverServed, r.ObserverToActive)
	}
	fmt.Fprintf(w, "faults injected: %d (%s)\n", len(r.Faults), faultSummary(r.Faults))
	for _, f := range r.Faults {
		if len(f.DeclaredDead) > 0 {
			fmt.Fprintf(w, "  %s %s for %s: namenode declared %s dead\n", f.At.Format("15:04:05"), f.Daemon, f.Down.Round(time.Second), strings.Join(f.DeclaredDead, ", "))
		}
	}
	printFailovers(w, r.FailoverStats)
	if r.FinalTerm > 0 || len(r.UncausedElections) > 0 {
		fmt.Fprintf(w, "elections without a fault: %d (term after the run: %d)\n", len(r.UncausedElections), r.FinalTerm)
		for _, e := range r.UncausedElections {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if r.ReplicasChecked > 0 || len(r.Diverged) > 0 {
		fmt.Fprintf(w, "replicas compared: %d of %d blocks; diverged: %d\n", r.ReplicasChecked, r.BlocksChecked, len(r.Diverged))
		for _, d := range r.Diverged {
			fmt.Fprintf(w, "  DIVERGED %s\n", d)
		}
	}
	fmt.Fprintf(w, "acknowledged ops verified: %d\n", r.Acked)
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
	fmt.Fprintf(w, "unverifiable (delete in doubt, file absent): %d\n", len(r.Unverifiable))
	for _, l := range r.Unverifiable {
		l.print(w, "UNVERIFIABLE", r.Faults)
	}
	fmt.Fprintf(w, "acknowledged ops lost: %d\n", len(r.Lost))
	for _, l := range r.Lost {
		l.print(w, "LOST", r.Faults)
	}
}

// run is one chaos run's shared state.
type run struct {
	o      Options
	st     *cluster.State
	inj    Injector
	start  time.Time
	runCtx context.Context // Run's: the load's operations run under it (opContext)

	mu       sync.Mutex // guards everything below
	rep      *Report
	files    map[int]*ackedFile // acknowledged files by id
	busy     map[int]bool       // files a worker is operating on
	deleted  []*ackedFile       // acknowledged deletes: path must stay absent
	jobs     []*ackedJob
	verified int // promises checked (and kept) before the end: jobs that fell out of KeepJobs
	nextID   int
	outLines sync.Mutex
}

// ackedFile is a put that closed: its bytes' digest, under the name the
// last acknowledged rename gave it. Only the worker that checked it out
// touches it, so its absence under that name is a loss.
type ackedFile struct {
	id   int
	path string
	// probe marks a failover probe's file: the load reads it but never
	// renames or deletes it, so every probe's acknowledged write is
	// checked at the end (a short run's load could delete them all).
	probe bool
	// alt is set when a rename of it to alt failed without a verdict:
	// the file is under exactly one of path and alt.
	alt string
	// old are the names acknowledged renames moved it from: each must be
	// absent at the end.
	old []string
	// delInDoubt is set when a delete of it failed without a verdict: it
	// is whole, or gone (then the loss cannot be told from the delete,
	// and the check reports it as unverifiable, not as kept).
	delInDoubt bool
	size       int64
	sum        [32]byte
	hist       history
	// by is the client whose put or rename of it was acknowledged last.
	// Another worker's client calls Msync before reading it, as a program
	// that hands a path between clients must with observer reads
	// (SMARTH_OBSERVER_READS): a standby serves a client what that client
	// has heard of, not what another was acknowledged.
	by *client.FileSystem
}

func (r *run) logf(format string, a ...any) {
	r.outLines.Lock()
	defer r.outLines.Unlock()
	fmt.Fprintf(r.o.Out, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, a...))
}

// count records one op of a kind and its outcome (nil: it succeeded).
func (r *run) count(op string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.rep.Ops[op]
	if c == nil {
		c = &OpCount{}
		r.rep.Ops[op] = c
	}
	if err == nil {
		c.OK++
		return
	}
	c.Failed++
	if len(c.Errors) < MaxOpErrors {
		c.Errors = append(c.Errors, time.Now().Format("15:04:05.000")+" "+err.Error())
	}
}

// lost reports a broken promise with the history of what it was about
// (nil: none kept).
func (r *run) lost(h *history, format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	r.mu.Lock()
	l := Loss{What: s}
	if h != nil {
		l = h.loss(s)
	}
	r.rep.Lost = append(r.rep.Lost, l)
	r.mu.Unlock()
	var b strings.Builder
	l.print(&b, "LOST", nil)
	r.logf("%s", strings.TrimRight(strings.TrimLeft(b.String(), " "), "\n"))
}

// unverifiable reports a promise that can be neither confirmed nor denied.
func (r *run) unverifiable(h *history, format string, a ...any) {
	l := h.loss(fmt.Sprintf(format, a...))
	r.mu.Lock()
	r.rep.Unverifiable = append(r.rep.Unverifiable, l)
	r.mu.Unlock()
	r.logf("UNVERIFIABLE %s", l.What)
}

func (r *run) warn(format string, a ...any) {
	s := fmt.Sprintf(format, a...)
	r.mu.Lock()
	r.rep.Warnings = append(r.rep.Warnings, s)
	r.mu.Unlock()
	r.logf("warning: %s", s)
}

func (r *run) newID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nextID++
	return r.nextID
}

// Run runs a chaos campaign against the cluster in o.Home and returns its
// report. The error is for a run that could not be carried out (no
// cluster, a daemon that would not start again); lost operations are in
// the report, not the error.
func Run(ctx context.Context, o Options) (*Report, error) {
	o.setDefaults()
	st, inj := o.Cluster, o.Injector
	if st == nil {
		var err error
		if st, err = cluster.LoadState(o.Home); err != nil {
			return nil, err
		}
		for _, d := range st.Daemons {
			if !d.Running() {
				return nil, fmt.Errorf("chaos: %s of the cluster in %s is not running; start it (smarth cluster up) first", d.Name, st.Home)
			}
		}
	}
	r := &run{o: o, st: st, runCtx: ctx, rep: &Report{Dir: o.Dir, Seed: o.Seed, Ops: map[string]*OpCount{}},
		files: map[int]*ackedFile{}, busy: map[int]bool{}}
	if inj == nil {
		inj = &Killer{Home: o.Home, Kinds: o.Kinds, MaxDown: o.MaxDown, Logf: r.logf, Warn: r.warn, NameNodeFaults: o.NameNodeFaults, StopHold: o.StopHold}
	}
	if k, ok := inj.(*Killer); ok && k.Probe == nil && st.HA() {
		probe, err := r.newProbe(ctx)
		if err != nil {
			return nil, err
		}
		defer probe.Close()
		k.Probe = r.probe(probe)
	}
	if p, ok := inj.(*Partitioner); ok {
		if p.Logf == nil {
			p.Logf = r.logf
		}
		if p.Warn == nil {
			p.Warn = r.warn
		}
	}
	r.inj = inj
	fsys, err := r.newClient("")
	if err != nil {
		return nil, err
	}
	defer fsys.Close()
	mctx, cancel := context.WithTimeout(ctx, time.Minute)
	err = fsys.Mkdir(mctx, o.Dir, 0o755, true)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("chaos: mkdir %s: %w", o.Dir, err)
	}
	if st.ResourceManager == "" && !o.NoJobs {
		r.logf("the cluster has no resource manager: running no jobs")
		o.NoJobs = true
		r.o.NoJobs = true
	}

	r.start = time.Now()
	loadCtx, stopLoad := context.WithTimeout(ctx, o.Duration)
	defer stopLoad()
	if o.Stop != nil {
		go func() {
			select {
			case <-o.Stop:
				r.logf("stop asked: ending the load early, then verifying")
				stopLoad()
			case <-loadCtx.Done():
			}
		}()
	}
	var wg sync.WaitGroup
	var faultErr error
	wg.Go(func() { faultErr = r.faults(loadCtx) })
	for w := range o.Workers {
		mode := ""
		if w%2 == 1 {
			mode = "multipipeline" // half the writers use SMARTH's asynchronous multi-pipeline write
		}
		wg.Go(func() { r.fileWorker(loadCtx, w, mode) })
	}
	if !o.NoJobs {
		wg.Go(func() { r.jobWorker(loadCtx) })
	}
	wg.Wait()
	r.rep.Elapsed = time.Since(r.start)
	r.rep.FailoverStats = Failovers(r.rep.Faults)
	if ctx.Err() != nil {
		return r.rep, ctx.Err()
	}
	if faultErr != nil {
		return r.rep, faultErr
	}
	r.logf("load done after %s: %d ops, %d faults; bringing every daemon back", r.rep.Elapsed.Round(time.Second), r.rep.OpsDone(), len(r.rep.Faults))

	sctx, cancel := context.WithTimeout(ctx, o.Settle)
	defer cancel()
	if err := r.inj.Settle(sctx); err != nil {
		return r.rep, err
	}
	r.countElections(sctx)
	if o.BeforeVerify != nil {
		if err := o.BeforeVerify(sctx, fsys, r.promises()); err != nil {
			return r.rep, err
		}
	}
	r.verify(sctx, fsys)
	r.checkReplicas(sctx, fsys)
	return r.rep, nil
}

// promises lists the promises verification will check.
func (r *run) promises() Promises {
	r.mu.Lock()
	defer r.mu.Unlock()
	var p Promises
	for _, f := range r.files {
		if f.alt != "" || f.delInDoubt {
			continue
		}
		p.Files = append(p.Files, f.path)
		for _, o := range f.old {
			p.Renamed = append(p.Renamed, [2]string{o, f.path})
		}
	}
	for _, f := range r.deleted {
		p.Deleted = append(p.Deleted, f.path)
	}
	for _, j := range r.jobs {
		p.JobOutputs = append(p.JobOutputs, j.output)
	}
	slices.Sort(p.Files)
	slices.SortFunc(p.Renamed, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	slices.Sort(p.Deleted)
	return p
}

func (r *run) newClient(mode string) (*client.FileSystem, error) {
	return r.newClientWith(mode, false)
}

// newClientWith is newClient, with observer reads when observer
// (SMARTH_OBSERVER_READS turns them on for every client).
func (r *run) newClientWith(mode string, observer bool) (*client.FileSystem, error) {
	sec, err := r.security()
	if err != nil {
		return nil, err
	}
	return client.New(client.Config{NameNode: r.st.NameNode, WriteMode: mode, TokenFile: sec.TokenFile, TLS: sec.TLS, ObserverReads: observer})
}

// security is the credential and CA the run's clients use: those the
// environment names, else the cluster owner's from the home the run was
// given (--home), whatever $SMARTH_HOME says.
func (r *run) security() (cluster.Security, error) { return r.st.ClientSecurity() }

// faults makes a fault with the run's injector every Interval (±25%)
// until ctx ends; each is undone before the next, so one daemon is down
// (one cut in force) at a time.
func (r *run) faults(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(r.o.Seed, 1))
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(jitter(rng, r.o.Interval)):
		}
		f, err := r.inj.Inject(ctx, rng)
		if f.Daemon != "" {
			r.mu.Lock()
			r.rep.Faults = append(r.rep.Faults, f)
			r.mu.Unlock()
		}
		if err != nil {
			return err
		}
		if f.Daemon == "" {
			continue // none made (the load ended while choosing the victim)
		}
		if len(f.StartErrs) > 0 {
			r.warn("%s needed %d start attempts after SIGKILL: %s", f.Daemon, len(f.StartErrs)+1, f.StartErrs[0])
		}
		r.mu.Lock()
		n := len(r.rep.Faults)
		r.mu.Unlock()
		r.logf("fault %d: %s back after %s", n, f.Daemon, f.Down.Round(10*time.Millisecond))
		if r.o.AfterFault != nil {
			if err := r.o.AfterFault(ctx, f); err != nil {
				return err
			}
		}
	}
}

// jitter is d ±25%.
func jitter(rng *rand.Rand, d time.Duration) time.Duration {
	return d*3/4 + time.Duration(rng.Int64N(int64(d)/2+1))
}

// pickVictim chooses a kind uniformly among those with a running daemon,
// then one running daemon of it.
func pickVictim(rng *rand.Rand, st *cluster.State, kinds []string) (cluster.Daemon, bool) {
	by := map[string][]cluster.Daemon{}
	var have []string
	for _, d := range st.Daemons {
		if slices.Contains(kinds, d.Kind) && d.Running() {
			if len(by[d.Kind]) == 0 {
				have = append(have, d.Kind)
			}
			by[d.Kind] = append(by[d.Kind], d)
		}
	}
	if len(have) == 0 {
		return cluster.Daemon{}, false
	}
	sort.Strings(have)
	ds := by[have[rng.IntN(len(have))]]
	return ds[rng.IntN(len(ds))], true
}

// errWrongContent is a read that returned bytes other than the
// acknowledged ones.
var errWrongContent = errors.New("wrong content")
