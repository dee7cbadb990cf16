package fsstate

import (
	"fmt"
	"maps"
	"slices"

	"smarth/internal/namenode/namespace"
)

// Delegation tokens' renewals and cancellations are namespace state, as
// HDFS logs OP_RENEW_DELEGATION_TOKEN and OP_CANCEL_DELEGATION_TOKEN: a
// token is signed, so the namenode needs no entry to accept it, but one
// renewed lives past the date it carries and one cancelled must be
// refused before it. Held only in one namenode's files, an HA group's
// other members forgot both: after a failover a revoked token worked
// again and a renewed one died at its first date. Logged, every member
// applies them, and images (snapshots) carry the table.
const (
	kindRenewToken  Kind = 88
	kindCancelToken Kind = 89
)

// recImageToken is an image record of the table: seq, then the entry as
// DelegationToken gives it.
const recImageToken = 'k'

// RenewToken moves delegation token Seq's expiry to Expiry (unix ms).
// Now is the operation's time, by which dead entries are dropped.
type RenewToken struct {
	Seq    uint64
	Expiry int64
	Now    int64
}

func (*RenewToken) Kind() Kind            { return kindRenewToken }
func (r *RenewToken) SetNow(unixMs int64) { r.Now = unixMs }
func (r *RenewToken) encode(e *enc)       { e.u(r.Seq); e.i(r.Expiry); e.i(r.Now) }
func (r *RenewToken) decode(d *dec)       { r.Seq, r.Expiry, r.Now = d.u(), d.i(), d.i() }
func (r *RenewToken) apply(s *State, _ namespace.Caller) (Applied, error) {
	if r.Expiry <= 0 {
		return Applied{}, fmt.Errorf("renewal of delegation token %d to expiry %d: not a date", r.Seq, r.Expiry)
	}
	if cur, ok := s.tokens[r.Seq]; !ok || cur > 0 {
		// A cancelled token stays cancelled (the live path refuses the
		// renewal before it logs one).
		s.setToken(r.Seq, r.Expiry, r.Now)
	}
	return Applied{}, nil
}

// CancelToken revokes delegation token Seq until MaxDate (unix ms), the
// last moment it could have lived.
type CancelToken struct {
	Seq     uint64
	MaxDate int64
	Now     int64
}

func (*CancelToken) Kind() Kind            { return kindCancelToken }
func (r *CancelToken) SetNow(unixMs int64) { r.Now = unixMs }
func (r *CancelToken) encode(e *enc)       { e.u(r.Seq); e.i(r.MaxDate); e.i(r.Now) }
func (r *CancelToken) decode(d *dec)       { r.Seq, r.MaxDate, r.Now = d.u(), d.i(), d.i() }
func (r *CancelToken) apply(s *State, _ namespace.Caller) (Applied, error) {
	if r.MaxDate <= 0 {
		return Applied{}, fmt.Errorf("cancellation of delegation token %d until %d: not a date", r.Seq, r.MaxDate)
	}
	s.setToken(r.Seq, -r.MaxDate, r.Now)
	return Applied{}, nil
}

// DelegationToken is token seq's entry: its renewed expiry (unix ms), or
// minus its max date once cancelled; ok false when it was neither
// renewed nor cancelled (its own dates hold).
func (s *State) DelegationToken(seq uint64) (entry int64, ok bool) {
	entry, ok = s.tokens[seq]
	return entry, ok
}

// setToken records an entry and drops the dead ones (an entry past its
// date: the token it names is refused by its own dates by then) each
// time the table has doubled, so that it holds about the tokens still
// alive. now comes from the record, so every member drops the same.
func (s *State) setToken(seq uint64, entry, now int64) {
	if s.tokens == nil {
		s.tokens = map[uint64]int64{}
	}
	s.tokens[seq] = entry
	if len(s.tokens) < s.tokensPruneAt {
		return
	}
	maps.DeleteFunc(s.tokens, func(_ uint64, e int64) bool { return max(e, -e) < now })
	s.tokensPruneAt = max(64, 2*len(s.tokens))
}

// eachTokenRecord emits the table, in seq order (the same state gives the
// same image).
func (s *State) eachTokenRecord(e *enc, emit func([]byte)) {
	for _, seq := range slices.Sorted(maps.Keys(s.tokens)) {
		e.b = append(e.b[:0], recImageToken)
		e.u(seq)
		e.i(s.tokens[seq])
		emit(e.b)
	}
}

func (s *State) loadTokenRecord(d *dec) error {
	seq, entry := d.u(), d.i()
	if err := d.done(); err != nil {
		return fmt.Errorf("image delegation-token record: %w", err)
	}
	if entry == 0 {
		return fmt.Errorf("image delegation-token record: token %d has no date", seq)
	}
	if s.tokens == nil {
		s.tokens = map[uint64]int64{}
	}
	s.tokens[seq] = entry
	s.tokensPruneAt = max(64, 2*len(s.tokens))
	return nil
}
