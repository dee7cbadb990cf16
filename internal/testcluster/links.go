package testcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Links slows or cuts the data-transfer links of an in-process cluster: the
// client's connections to datanodes and the datanodes' connections to each
// other (write pipelines, re-replication). A link is named by its ends:
// "client" or a datanode hostname ("dn1") as the dialing side, a datanode
// hostname as the other, "*" for any. Shaping paces the bytes the dialing
// side writes (the direction block data flows in a pipeline), shared by all
// connections of the link; reads from datanodes are not shaped. Cutting a
// link closes its connections and makes new dials fail.
//
// Give it to Options.Links; the cluster installs its dialers into every
// datanode and into the clients Client returns.
type Links struct {
	mu    sync.Mutex // guards rules, addrs, conns, pace
	rules map[[2]string]rule
	addrs map[string]string // data address -> datanode hostname
	conns map[*shapedConn]struct{}
	pace  map[[2]string]time.Time // per link: when its last reserved byte is sent
}

type rule struct {
	rate int64 // bytes per second, 0 = unlimited
	cut  bool
}

// NewLinks returns link controls with every link open and unlimited.
func NewLinks() *Links {
	return &Links{rules: map[[2]string]rule{}, addrs: map[string]string{}, conns: map[*shapedConn]struct{}{}, pace: map[[2]string]time.Time{}}
}

// Slow limits the link from -> to to bytesPerSec (0 lifts the limit).
func (l *Links) Slow(from, to string, bytesPerSec int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rules[[2]string{from, to}]
	r.rate = bytesPerSec
	l.rules[[2]string{from, to}] = r
}

// Cut breaks the link from -> to: open connections are closed and new
// dials fail until Heal.
func (l *Links) Cut(from, to string) {
	l.mu.Lock()
	r := l.rules[[2]string{from, to}]
	r.cut = true
	l.rules[[2]string{from, to}] = r
	var doomed []*shapedConn
	for c := range l.conns {
		if l.ruleLocked(c.from, c.to).cut {
			doomed = append(doomed, c)
		}
	}
	l.mu.Unlock()
	for _, c := range doomed {
		c.Conn.Close()
	}
}

// Heal undoes Cut and Slow for the link from -> to.
func (l *Links) Heal(from, to string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.rules, [2]string{from, to})
}

// ruleLocked is the most specific rule for a link: exact, then wildcards.
func (l *Links) ruleLocked(from, to string) rule {
	for _, k := range [][2]string{{from, to}, {from, "*"}, {"*", to}, {"*", "*"}} {
		if r, ok := l.rules[k]; ok {
			return r
		}
	}
	return rule{}
}

// register records the data address of a datanode (again after a restart).
func (l *Links) register(addr, host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.addrs[addr] = host
}

// dialer returns the dial function of one side ("client" or "dnN").
func (l *Links) dialer(from string) func(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, addr string) (net.Conn, error) {
		l.mu.Lock()
		to, ok := l.addrs[addr]
		if !ok {
			to = addr
		}
		cut := l.ruleLocked(from, to).cut
		l.mu.Unlock()
		if cut {
			return nil, fmt.Errorf("dial %s (%s): link %s -> %s is cut by the test", addr, to, from, to)
		}
		c, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		sc := &shapedConn{Conn: c, links: l, from: from, to: to}
		l.mu.Lock()
		l.conns[sc] = struct{}{}
		l.mu.Unlock()
		return sc, nil
	}
}

// reserve books n bytes on the link and returns when they may be sent.
func (l *Links) reserve(from, to string, n int) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.ruleLocked(from, to)
	if r.cut {
		return time.Time{}, errors.New("link cut by the test")
	}
	now := time.Now()
	if r.rate <= 0 {
		return now, nil
	}
	k := [2]string{from, to}
	// A link idle or behind by up to shapeCredit may catch up (a token
	// bucket of that depth), so oversleeping a few milliseconds under load
	// does not make the link slower than its rate.
	start := l.pace[k]
	if floor := now.Add(-shapeCredit); start.Before(floor) {
		start = floor
	}
	end := start.Add(time.Duration(float64(n) / float64(r.rate) * float64(time.Second)))
	l.pace[k] = end
	return end, nil
}

// shapedConn paces its writes by its link's rate.
type shapedConn struct {
	net.Conn
	links    *Links
	from, to string
}

// shapeChunk is the unit of pacing: small enough to keep a link smooth.
const shapeChunk = 16 << 10

// shapeCredit is how far behind its schedule a link may fall and still
// catch up.
const shapeCredit = 20 * time.Millisecond

func (c *shapedConn) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n := min(len(p)-done, shapeChunk)
		at, err := c.links.reserve(c.from, c.to, n)
		if err != nil {
			c.Conn.Close()
			return done, err
		}
		if d := time.Until(at); d > 0 {
			time.Sleep(d) // emulating a slower link: the bytes are "on the wire" until then
		}
		m, err := c.Conn.Write(p[done : done+n])
		done += m
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func (c *shapedConn) Close() error {
	c.links.mu.Lock()
	delete(c.links.conns, c)
	c.links.mu.Unlock()
	return c.Conn.Close()
}
