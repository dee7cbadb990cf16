package namenode

import (
	"math"

	"github.com/prometheus/client_golang/prometheus"

	"smarth/internal/namenode/console"
)

// What the console and the metrics show of the HA group: each member's
// role, the term, raft's indexes, and on the active each follower's lag
// (replog's Followers: the active is the only one that knows them).

// consoleHA is the overview's HA section.
func (h *haNode) consoleHA() *console.HA {
	st := h.log.Stats()
	out := &console.HA{ID: st.ID, Active: h.active.Load(), ActiveID: st.Leader, Term: st.Term}
	follow := map[string]console.HAMember{}
	for _, f := range h.log.Followers() {
		follow[f.ID] = console.HAMember{Known: true, Applied: f.Match, Lag: f.Lag, LastContact: f.LastContact, Contacted: f.Contacted}
	}
	for _, m := range st.Members {
		r := follow[m.ID]
		if m.ID == st.ID {
			// Itself: what it applied; on a standby, the entries it knows
			// committed and has not applied yet, and when it last heard
			// from the active.
			r = console.HAMember{Known: true, Applied: st.AppliedIndex, Lag: st.CommitIndex - min(st.CommitIndex, st.AppliedIndex)}
			if !out.Active && st.LastContact > 0 {
				r.LastContact, r.Contacted = st.LastContact, true
			}
		}
		p := h.peer(m.ID)
		r.ID, r.RPC, r.Raft, r.Active = m.ID, p.RPC, m.Addr, m.ID == st.Leader
		out.Members = append(out.Members, r)
	}
	return out
}

// haCollector exports the group's state as smarth_namenode_ha_* series,
// named after HDFS's (HAState; a JournalNode's LastWriterEpoch,
// LastAppliedOrWrittenTxId and CurrentLagTxns). A namenode without HA
// exports none. It is an unchecked collector (Describe sends nothing):
// the follower series come and go with the membership.
type haCollector struct{ nn *NameNode }

var (
	haDescState = prometheus.NewDesc("smarth_namenode_ha_state",
		"1 on the active namenode of the HA group, 0 on a standby (HDFS's HAState).", nil, nil)
	haDescTerm = prometheus.NewDesc("smarth_namenode_ha_term",
		"The group's raft term: the active's fencing epoch (HDFS's LastWriterEpoch).", nil, nil)
	haDescApplied = prometheus.NewDesc("smarth_namenode_ha_applied_index",
		"Last raft index applied to this namenode's namespace.", nil, nil)
	haDescCommit = prometheus.NewDesc("smarth_namenode_ha_commit_index",
		"Last raft index this namenode knows committed on a majority.", nil, nil)
	haDescTxID = prometheus.NewDesc("smarth_namenode_ha_applied_txid",
		"Last edit (transaction id) applied or written here (HDFS's LastAppliedOrWrittenTxId).", nil, nil)
	haDescContact = prometheus.NewDesc("smarth_namenode_ha_last_contact_seconds",
		"On a standby, the time since it last heard from the active (+Inf: never since it started); 0 on the active.", nil, nil)
	haDescMembers = prometheus.NewDesc("smarth_namenode_ha_members",
		"Voting members of the group, as this namenode's configuration of the group says.", nil, nil)
	haDescLag = prometheus.NewDesc("smarth_namenode_ha_follower_lag_entries",
		"On the active, the raft entries each other member has still to receive (HDFS's CurrentLagTxns).", []string{"member"}, nil)
	haDescObserver = prometheus.NewDesc("smarth_namenode_ha_observer_reads_total",
		"Observer reads (namespace reads of clients that sent their state id) this member, as a standby, served or sent to the active because it was behind.", []string{"outcome"}, nil)
	haDescFollowerContact = prometheus.NewDesc("smarth_namenode_ha_follower_last_contact_seconds",
		"On the active, the time since each other member last answered it (+Inf: never since it became active or the member was added).", []string{"member"}, nil)
)

func (haCollector) Describe(chan<- *prometheus.Desc) {}

func (c haCollector) Collect(ch chan<- prometheus.Metric) {
	h := c.nn.ha
	if h == nil {
		return
	}
	st := h.log.Stats()
	g := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	active := h.active.Load()
	state, contact := 0.0, math.Inf(1)
	if active {
		state, contact = 1, 0
	} else if st.LastContact > 0 {
		contact = st.LastContact.Seconds()
	}
	g(haDescState, state)
	g(haDescTerm, float64(st.Term))
	g(haDescApplied, float64(st.AppliedIndex))
	g(haDescCommit, float64(st.CommitIndex))
	g(haDescTxID, float64(c.nn.journal.LastTxID()))
	g(haDescContact, contact)
	g(haDescMembers, float64(len(st.Members)))
	ch <- prometheus.MustNewConstMetric(haDescObserver, prometheus.CounterValue, float64(h.observerServed.Load()), "served")
	ch <- prometheus.MustNewConstMetric(haDescObserver, prometheus.CounterValue, float64(h.observerRefused.Load()), "refused")
	if !active {
		return
	}
	for _, f := range h.log.Followers() {
		g(haDescLag, float64(f.Lag), f.ID)
		fc := math.Inf(1)
		if f.Contacted {
			fc = f.LastContact.Seconds()
		}
		g(haDescFollowerContact, fc, f.ID)
	}
}
