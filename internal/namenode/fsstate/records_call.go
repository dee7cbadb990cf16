package fsstate

import (
	"fmt"

	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/callid"
)

// kindCall is a record that carries the ids of the client call that made
// it: HDFS writes rpcClientId and rpcCallId into its edit ops so that a
// standby replaying them rebuilds the retry cache; here a Call wraps the
// operation's own record. A new kind rather than a trailer on every
// record: the records before it stay byte for byte what they were (the
// golden files, journals on disk), a record without ids (an internal
// operation, an old client) is written as before, and one decoder handles
// the ids for every kind.
const kindCall Kind = 96

// Call is Op as made by the client call ID of User: replay applies Op
// and gives the ids back (Applied.Call), for the retry cache.
type Call struct {
	ID   callid.ID
	User string // the caller, part of the cache's key
	Op   Record
}

func (*Call) Kind() Kind { return kindCall }

// SetNow stamps the wrapped record, if it is timed.
func (r *Call) SetNow(ms int64) {
	if t, ok := r.Op.(Timed); ok {
		t.SetNow(ms)
	}
}

func (r *Call) encode(e *enc) {
	e.s(string(r.ID.Client[:]))
	e.u(r.ID.Call)
	e.s(r.User)
	e.b = append(e.b, byte(r.Op.Kind()))
	r.Op.encode(e)
}

func (r *Call) decode(d *dec) {
	client := d.s()
	r.ID.Call = d.u()
	r.User = d.s()
	if d.err != nil {
		return
	}
	if len(client) != callid.ClientIDLen {
		d.err = fmt.Errorf("client id of %d bytes, want %d", len(client), callid.ClientIDLen)
		return
	}
	copy(r.ID.Client[:], client)
	if len(d.b) == 0 {
		d.err = errShort
		return
	}
	k, ok := kinds[Kind(d.b[0])]
	if !ok || Kind(d.b[0]) == kindCall {
		d.err = fmt.Errorf("call of unknown or nested op %d", d.b[0])
		return
	}
	d.b = d.b[1:]
	r.Op = k.new()
	r.Op.decode(d)
}

// apply is Op's: a Call changes nothing Op does not.
func (r *Call) apply(s *State, c namespace.Caller) (Applied, error) { return r.Op.apply(s, c) }

// unwrap is the operation a record performs: a Call's Op, else itself.
func unwrap(r Record) Record {
	if c, ok := r.(*Call); ok {
		return c.Op
	}
	return r
}
