package namenode

import (
	"context"
	"net/netip"

	"smarth/internal/topology"
)

// clientPlace is where a client sits in the network as the namenode sees
// it: what placement, reader ordering and speed records key on.
type clientPlace struct {
	// Key names the client's host for its speed records: the address its
	// calls come from, or on loopback (where every client of the machine
	// shares 127.0.0.1) the host name it reports. Records belong to a
	// host, not to one process, so every upload from a host learns from
	// the ones before.
	Key  string
	Host string // the host name the client reports ("" if none)
	IP   string // the address its calls come from, unless loopback
	Rack string // "" when the mapping does not place it
}

// location is the client as a topology.Location.
func (c clientPlace) location() topology.Location {
	return topology.Location{Host: c.Host, IP: c.IP, Rack: c.Rack}
}

// isLoopback reports whether addr is a loopback IP. A loopback peer says
// only "this machine", which in a loopback cluster is every datanode's
// machine too, so it is never matched against datanode addresses.
func isLoopback(addr string) bool {
	a, err := netip.ParseAddr(addr)
	return err == nil && a.IsLoopback()
}

// placeClient resolves a client from the host name it reports and the
// address of the call, as HDFS does with the RPC's remote address: the
// address first, since it is the client's network position, then the
// name, then a loopback address (a local cluster maps 127.0.0.1). It runs
// the topology script if it must, so callers do not hold nn.mu.
func (nn *NameNode) placeClient(ctx context.Context, reported string) clientPlace {
	peer := peerHost(ctx)
	c := clientPlace{Host: reported}
	if peer != "" && !isLoopback(peer) {
		c.IP = peer
	}
	c.Key = hostKey(peer, reported)
	c.Rack, _ = nn.racks.Lookup(c.IP, reported, peer)
	if err := nn.racks.ScriptError(); err != nil {
		nn.logger.Warn("topology script failed; the addresses are treated as unplaced for a minute", "error", err)
	}
	return c
}

// onDatanodeLocked puts a client that runs on a datanode's host in that
// datanode's rack, whatever the mapping says of the client's own name.
func (nn *NameNode) onDatanodeLocked(c clientPlace) clientPlace {
	loc := topology.Location{Host: c.Host, IP: c.IP}
	for _, dn := range nn.nodes {
		if topology.SameHost(loc, dn.location()) {
			c.Rack = dn.info.Rack
			break
		}
	}
	return c
}

// hostKey names a client's host for its speed records: the address its
// calls come from, unless loopback, else the name it reports.
func hostKey(peer, reported string) string {
	switch {
	case peer != "" && !isLoopback(peer):
		return peer
	case reported != "":
		return reported
	}
	return peer
}
