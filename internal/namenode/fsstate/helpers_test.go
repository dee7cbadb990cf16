package fsstate

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// newTestState is an empty state with hdfs as its superuser.
func newTestState() *State {
	return New(namespace.New(namespace.Config{Superuser: "hdfs", Now: 1}), blockmap.New(), nil)
}

// replayCaller is the caller replay (ApplyEdit) applies r as.
func replayCaller(r Record) namespace.Caller {
	c := namespace.Caller{Trusted: true}
	if o, ok := r.(owned); ok {
		c.User = o.owner()
	}
	return c
}

// imageRecords returns the payloads of s's image, as Load would give them.
func imageRecords(t testing.TB, s *State) [][]byte {
	var recs [][]byte
	s.EachImageRecord(func(b []byte) { recs = append(recs, append([]byte(nil), b...)) })
	return recs
}

// dumpFS renders the live tree, blocks and counters, to compare states.
func dumpFS(s *State) string {
	var lines []string
	s.tree.Walk(func(n *namespace.INode) bool {
		l := fmt.Sprintf("%s id=%d dir=%v mode=%o %s:%s mtime=%d", n.Path(), n.ID, n.IsDir(), n.Perm(), n.Owner(), n.Group(), n.MTime)
		if !n.IsDir() {
			l += fmt.Sprintf(" repl=%d bs=%d len=%d", n.Replication(), n.BlockSize(), n.Length())
			if n.Writer() != nil {
				l += " writer=" + n.Writer().Client
			}
			for _, b := range n.Blocks {
				l += fmt.Sprintf(" [%d gs=%d len=%d %v]", b.ID, b.GS, b.NumBytes, b.State)
			}
		}
		lines = append(lines, l)
		return true
	})
	sort.Strings(lines)
	lines = append(lines, fmt.Sprintf("lastInode=%d lastBlock=%d lastGS=%d", s.tree.LastID(), s.blocks.LastID(), s.blocks.LastGS()))
	return strings.Join(lines, "\n")
}

// actAs makes a record that names the user it acts for name u.
func actAs(r Record, u string) {
	switch r := r.(type) {
	case *Mkdirs:
		r.User = u
	case *Create:
		r.User = u
	case *Append:
		r.User = u
	}
}
