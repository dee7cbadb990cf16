package namenode

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"smarth/internal/ipc"
	"smarth/internal/rpc/dfspb"
)

// TestHAObserverReadsReadYourWrites: a standby serves a namespace read
// that carries the client's state id once it has applied that far, so
// the client reads its own write; a standby cut off from the group's log
// holds such a read and then sends it to the active instead of
// answering from its stale namespace. The control proves the standby is
// stale: the same read with an older state id is served, and misses the
// write. A read without a state id is refused as before.
func TestHAObserverReadsReadYourWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("a group of three namenodes (about 5 s)")
	}
	cuts := map[string]*raftCut{}
	g := startHAGroup(t, 3, func(c *Config) {
		cut := &raftCut{}
		cuts[c.HA.ID] = cut
		c.raftConn = cut.wrap
	})
	t.Cleanup(func() {
		for _, c := range cuts {
			c.heal()
		}
	})
	a := g.active(nil)
	f := (a + 1) % 3
	act, obs := g.cli[a], g.cli[f]
	withState := func(c *rpcClient, st uint64) context.Context {
		return metadata.AppendToOutgoingContext(c.ctx(), ipc.StateKey, strconv.FormatUint(st, 10))
	}
	mkdir := func(p string) uint64 {
		t.Helper()
		var tr metadata.MD
		if _, err := act.cp.Mkdirs(withState(act, 0), &dfspb.MkdirsRequest{Path: p}, grpc.Trailer(&tr)); err != nil {
			t.Fatalf("mkdirs %s on the active: %v", p, err)
		}
		st, err := strconv.ParseUint(first(tr.Get(ipc.StateKey)), 10, 64)
		if err != nil || st == 0 {
			t.Fatalf("the active's reply to mkdirs %s carries state %v, want its txid", p, tr)
		}
		return st
	}
	stat := func(p string, st uint64) (*dfspb.GetFileInfoResponse, uint64, error) {
		var tr metadata.MD
		r, err := obs.cp.GetFileInfo(withState(obs, st), &dfspb.GetFileInfoRequest{Path: p}, grpc.Trailer(&tr))
		got, _ := strconv.ParseUint(first(tr.Get(ipc.StateKey)), 10, 64)
		return r, got, err
	}

	st1 := mkdir("/seen")
	r, got, err := stat("/seen", st1)
	if err != nil || r.GetStatus() == nil {
		t.Fatalf("getFileInfo /seen on standby nn%d with the state of its mkdirs (%d): %v, %v; want the directory", f, st1, r, err)
	}
	if got < st1 {
		t.Errorf("the standby answered with state %d, below the %d it was asked for", got, st1)
	}
	if n := g.nns[f].ha.observerServed.Load(); n != 1 {
		t.Errorf("standby served %d observer reads, want 1", n)
	}

	// getBlockLocations: a file being written goes to the active (its
	// pipeline is the active's); a closed one the standby serves.
	var tr metadata.MD
	if _, err := act.cp.Create(withState(act, 0), &dfspb.CreateRequest{Path: "/open", ClientName: "w1", CreateParent: true, Replication: 1}, grpc.Trailer(&tr)); err != nil {
		t.Fatal(err)
	}
	if _, err := act.cp.Create(withState(act, 0), &dfspb.CreateRequest{Path: "/closed", ClientName: "w1", CreateParent: true, Replication: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := act.cp.Complete(withState(act, 0), &dfspb.CompleteRequest{Path: "/closed", ClientName: "w1"}, grpc.Trailer(&tr)); err != nil {
		t.Fatal(err)
	}
	stc, _ := strconv.ParseUint(first(tr.Get(ipc.StateKey)), 10, 64)
	if _, err := obs.cp.GetBlockLocations(withState(obs, stc), &dfspb.GetBlockLocationsRequest{Path: "/open"}); !isStandby(err) {
		t.Errorf("getBlockLocations of a file being written, on a standby: %v; want it sent to the active", err)
	}
	if _, err := obs.cp.GetBlockLocations(withState(obs, stc), &dfspb.GetBlockLocationsRequest{Path: "/closed"}); err != nil {
		t.Errorf("getBlockLocations of a closed file on a standby at the client's state: %v; want it served", err)
	}

	// Cut the standby off the group's log: it applies nothing more.
	cuts[g.cfgs[f].HA.ID].cut()
	st2 := mkdir("/later")
	start := time.Now()
	_, _, err = stat("/later", st2)
	if !isStandby(err) {
		t.Fatalf("getFileInfo /later on the cut-off standby with state %d: %v; want a standby refusal (sent to the active), not an answer from its stale namespace", st2, err)
	}
	if waited := time.Since(start); waited < observerWait/2 {
		t.Errorf("refused after %v: the standby should hold the read for its log to catch up first (%v)", waited, observerWait)
	}
	// A new client has seen nothing. msync on the active gives it the
	// active's state, which covers /later, so its first observer read is
	// the refusal above rather than the stale answer below. A standby
	// refuses msync: only the active's state covers what was acknowledged.
	var mtr metadata.MD
	if _, err := act.cp.Msync(withState(act, 0), &dfspb.MsyncRequest{}, grpc.Trailer(&mtr)); err != nil {
		t.Fatalf("msync on the active: %v", err)
	}
	if ms, _ := strconv.ParseUint(first(mtr.Get(ipc.StateKey)), 10, 64); ms < st2 {
		t.Errorf("msync on the active answered state %d, below the %d of the mkdirs it acknowledged", ms, st2)
	}
	if _, err := obs.cp.Msync(withState(obs, 0), &dfspb.MsyncRequest{}); !isStandby(err) {
		t.Errorf("msync on a standby: %v; want a standby refusal", err)
	}
	// The control: with the older state the standby serves the read, and
	// its namespace has no /later.
	if _, _, err := stat("/later", st1); status.Code(err) != codes.NotFound {
		t.Fatalf("getFileInfo /later on the cut-off standby with the older state %d: %v; want NotFound (it is behind)", st1, err)
	}
	// Without a state id a standby serves no read.
	if _, err := obs.cp.GetFileInfo(obs.ctx(), &dfspb.GetFileInfoRequest{Path: "/seen"}); !isStandby(err) {
		t.Fatalf("getFileInfo without a state id on a standby: %v; want a standby refusal", err)
	}
	cuts[g.cfgs[f].HA.ID].heal()
	waitFor(t, "the healed standby to serve /later at its state", func() bool {
		r, _, err := stat("/later", st2)
		return err == nil && r.GetStatus() != nil
	})
}

// The observer reads are the read index's namespace reads but fsck and
// msync, which only the active answers.
func TestObserverReadsAreLinearReads(t *testing.T) {
	for m := range linearRead {
		if want := m != clientProtocol+"Fsck" && m != clientProtocol+"Msync"; observerRead[m] != want {
			t.Errorf("%s: observer read %v, want %v", m, observerRead[m], want)
		}
	}
	for m := range observerRead {
		if !linearRead[m] {
			t.Errorf("%s is an observer read but not a namespace read of the read index", m)
		}
	}
}
