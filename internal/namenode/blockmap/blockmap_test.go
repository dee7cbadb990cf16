package blockmap

import (
	"slices"
	"testing"
)

func allLive(string) bool { return true }

func newBlock(m *Map, state State, length int64) *Block {
	b := &Block{ID: m.NextID(), GS: m.NextGS(), NumBytes: length, State: state, FileID: 7, Expected: 3}
	m.Add(b)
	return b
}

func TestIDsAndStampsAreMonotonic(t *testing.T) {
	m := New()
	a, b := m.NextID(), m.NextID()
	if a != FirstBlockID || b != a+1 {
		t.Fatalf("ids %d, %d; want %d, %d", a, b, FirstBlockID, FirstBlockID+1)
	}
	m.Observe(5000000000, 90000)
	if id, gs := m.NextID(), m.NextGS(); id != 5000000001 || gs != 90001 {
		t.Fatalf("after Observe: id %d gs %d", id, gs)
	}
	m.Observe(1, 1) // never goes back
	if id := m.NextID(); id != 5000000002 {
		t.Fatalf("Observe lowered the counter: %d", id)
	}
}

func TestReplicaVerdicts(t *testing.T) {
	m := New()
	b := newBlock(m, Complete, 100)
	cases := []struct {
		name string
		node string
		rep  Reported
		want Verdict
	}{
		{"good", "dn1", Reported{b.ID, b.GS, 100, Finalized}, Accepted},
		{"unknown block", "dn1", Reported{b.ID + 99, b.GS, 100, Finalized}, Unknown},
		{"old stamp", "dn2", Reported{b.ID, b.GS - 1, 100, Finalized}, Corrupt},
		{"short", "dn3", Reported{b.ID, b.GS, 99, Finalized}, Corrupt},
		{"still being written", "dn4", Reported{b.ID, b.GS, 50, BeingWritten}, Accepted},
		{"stale being written", "dn5", Reported{b.ID, b.GS - 1, 50, BeingWritten}, Corrupt},
	}
	for _, c := range cases {
		if got := m.AddReplica(c.node, c.rep); got != c.want {
			t.Errorf("%s: verdict %d, want %d", c.name, got, c.want)
		}
	}
	got := b.Count(allLive)
	if want := (Counts{Live: 1, Corrupt: 3, Writing: 1}); got != want {
		t.Errorf("counts %+v, want %+v", got, want)
	}
	if n := m.NodeBlockCount("dn3"); n != 1 {
		t.Errorf("dn3 holds %d blocks in the index, want 1", n)
	}
	// dn3 fixes its replica (e.g. re-reported after a restart with the
	// right length): judged again, no longer corrupt.
	if v := m.AddReplica("dn3", Reported{b.ID, b.GS, 100, Finalized}); v != Accepted {
		t.Errorf("re-report of a fixed replica: verdict %d", v)
	}
}

func TestUnderConstructionReplicasAreNotJudged(t *testing.T) {
	m := New()
	b := newBlock(m, UnderConstruction, 0)
	// While writing, any stamp and length may be reported (pipeline
	// recovery in progress); nothing is corrupt yet.
	for i, rep := range []Reported{{b.ID, b.GS, 10, BeingWritten}, {b.ID, b.GS - 1, 5, BeingWritten}, {b.ID, b.GS, 64, Finalized}} {
		if v := m.AddReplica([]string{"dn1", "dn2", "dn3"}[i], rep); v != Accepted {
			t.Errorf("report %d: verdict %d", i, v)
		}
	}
	// Commit with length 64: dn3 is good, dn2 has an old stamp.
	if err := m.Commit(b, b.GS, 64); err != nil {
		t.Fatal(err)
	}
	if c := b.Count(allLive); c != (Counts{Live: 1, Corrupt: 1, Writing: 1}) {
		t.Errorf("after commit: %+v", c)
	}
	if b.TryComplete(2, allLive) {
		t.Error("complete with 1 of 2 required replicas")
	}
	m.AddReplica("dn1", Reported{b.ID, b.GS, 64, Finalized})
	if !b.TryComplete(2, allLive) || b.State != Complete {
		t.Error("not complete with 2 good replicas")
	}
	if err := m.Commit(b, b.GS, 65); err == nil {
		t.Error("a complete block accepted a different length")
	}
	if err := m.Commit(b, b.GS, 64); err != nil {
		t.Errorf("repeating the same commit: %v", err)
	}
}

func TestBadDataSticks(t *testing.T) {
	m := New()
	b := newBlock(m, Complete, 100)
	m.AddReplica("dn1", Reported{b.ID, b.GS, 100, Finalized})
	if !m.MarkCorrupt(b.ID, "dn1", "checksum error at offset 512") {
		t.Fatal("MarkCorrupt: block not found")
	}
	// The datanode still reports it as fine in its block report.
	if v := m.AddReplica("dn1", Reported{b.ID, b.GS, 100, Finalized}); v != Corrupt {
		t.Errorf("bad replica re-reported: verdict %d, want Corrupt", v)
	}
	// A node we never heard of having it: recorded so it gets deleted.
	m.MarkCorrupt(b.ID, "dn9", "reported by a client")
	if c := b.Count(allLive); c.Corrupt != 2 || c.Live != 0 {
		t.Errorf("counts %+v", c)
	}
	if m.MarkCorrupt(b.ID+1, "dn1", "x") {
		t.Error("MarkCorrupt of an unknown block succeeded")
	}
}

func TestFullReport(t *testing.T) {
	m := New()
	b1 := newBlock(m, Complete, 10)
	b2 := newBlock(m, Complete, 20)
	b3 := newBlock(m, Complete, 30)
	m.AddReplica("dn1", Reported{b1.ID, b1.GS, 10, Finalized})
	m.AddReplica("dn1", Reported{b2.ID, b2.GS, 20, Finalized})
	res := m.ProcessReport("dn1", []Reported{
		{b2.ID, b2.GS, 20, Finalized},
		{b3.ID, b3.GS, 31, Finalized},
		{12345, 1, 5, Finalized},
	})
	if !slices.Equal(res.Removed, []uint64{b1.ID}) {
		t.Errorf("removed %v, want [%d]", res.Removed, b1.ID)
	}
	if len(res.Invalidate) != 1 || res.Invalidate[0].ID != 12345 {
		t.Errorf("invalidate %v", res.Invalidate)
	}
	if !slices.Equal(res.Corrupt, []uint64{b3.ID}) || !slices.Equal(res.Added, []uint64{b2.ID}) {
		t.Errorf("corrupt %v added %v", res.Corrupt, res.Added)
	}
	if got := m.NodeBlocks("dn1"); !slices.Equal(got, []uint64{b2.ID, b3.ID}) {
		t.Errorf("dn1 blocks %v", got)
	}
}

func TestRemoveNodeAndBlock(t *testing.T) {
	m := New()
	b := newBlock(m, Complete, 10)
	for _, n := range []string{"dn1", "dn2", "dn3"} {
		m.AddReplica(n, Reported{b.ID, b.GS, 10, Finalized})
	}
	if got := m.RemoveNode("dn2"); !slices.Equal(got, []uint64{b.ID}) {
		t.Errorf("RemoveNode affected %v", got)
	}
	if got := b.Good(allLive); !slices.Equal(got, []string{"dn1", "dn3"}) {
		t.Errorf("good replicas %v", got)
	}
	onlyDN1 := func(n string) bool { return n == "dn1" }
	if c := b.Count(onlyDN1); c.Live != 1 {
		t.Errorf("with dn3 dead: %+v", c)
	}
	reps := m.Remove(b.ID)
	if len(reps) != 2 || m.Get(b.ID) != nil || m.NodeBlockCount("dn1") != 0 {
		t.Errorf("Remove returned %v; block still there: %v", reps, m.Get(b.ID) != nil)
	}
}

func TestPipelineUpdateForgetsDroppedNodes(t *testing.T) {
	m := New()
	b := newBlock(m, UnderConstruction, 0)
	b.SetTargets([]string{"dn1", "dn2", "dn3"})
	for _, n := range b.Targets() {
		m.AddReplica(n, Reported{b.ID, b.GS, 0, BeingWritten})
	}
	gs := m.NextGS()
	m.UpdateUnderConstruction(b, gs, 4096, []string{"dn1", "dn3", "dn4"})
	if b.GS != gs || b.NumBytes != 4096 {
		t.Errorf("block %+v", b)
	}
	var nodes []string
	for _, r := range b.ReplicaList() {
		nodes = append(nodes, r.Node)
	}
	if !slices.Equal(nodes, []string{"dn1", "dn3"}) || m.NodeBlockCount("dn2") != 0 {
		t.Errorf("replicas after update: %v", nodes)
	}
}
