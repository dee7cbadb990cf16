package console

import (
	"fmt"
	"time"
)

// HA is what the overview shows of the namenode's HA group (nil without
// HA: the overview shows nothing of it). Only the active knows how far
// each other member is (it replicates to them); a standby knows itself.
type HA struct {
	ID       string // this namenode's id in the group
	Active   bool
	ActiveID string // "" during an election
	Term     uint64
	Members  []HAMember
}

// HAMember is one member as this namenode knows it.
type HAMember struct {
	ID, RPC, Raft string
	Active        bool
	// Known: the indexes below are known here (this namenode itself,
	// or a follower seen from the active).
	Known bool
	// Applied is the raft index the member has applied (itself) or is
	// known to hold (a follower seen from the active); Lag is the
	// entries it still has to receive.
	Applied, Lag uint64
	// LastContact: a follower's last answer to the active, or this
	// standby's last word from the active; Contacted false: never.
	LastContact time.Duration
	Contacted   bool
}

type statusHA struct {
	ID, Role, Active string
	Term             uint64
	Members          []statusHAMember
}

type statusHAMember struct {
	ID, RPC, Raft, Role, Applied, Lag, Contact string
	Self                                       bool
}

func haStatus(h *HA) *statusHA {
	if h == nil {
		return nil
	}
	s := &statusHA{ID: h.ID, Role: "standby", Active: h.ActiveID, Term: h.Term}
	if h.Active {
		s.Role = "active"
	}
	if s.Active == "" {
		s.Active = "none known (election in progress)"
	}
	for _, m := range h.Members {
		r := statusHAMember{ID: m.ID, RPC: m.RPC, Raft: m.Raft, Role: "standby", Applied: "-", Lag: "-", Contact: "-", Self: m.ID == h.ID}
		if m.Active {
			r.Role = "active"
		}
		if m.Known {
			r.Applied, r.Lag = fmt.Sprint(m.Applied), fmt.Sprint(m.Lag)
		}
		switch {
		case m.Contacted:
			r.Contact = m.LastContact.Round(time.Millisecond).String() + " ago"
		case m.Known && !r.Self:
			r.Contact = "never"
		}
		if r.RPC == "" {
			r.RPC = "unknown (not in ha_peers)"
		}
		s.Members = append(s.Members, r)
	}
	return s
}
