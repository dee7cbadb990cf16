// Package netplan turns a topology into the iproute2 commands that build it:
// network namespaces, veth pairs, one bridge per rack, a core router between
// the racks, and the tc classes that enforce each host's rates. It does no
// I/O; internal/testbed runs the commands and records what it made.
//
// The layout (drawn in docs/testbed.md): one namespace per host with a veth
// "eth0"; a core namespace holding one bridge per rack ("br<rack>"), each
// host's other veth end ("h<host>") as a port of its rack's bridge, and per
// rack a veth pair ("u<rack>" on the bridge, "r<rack>" with the rack's
// gateway address) into the core's routing table, so traffic between racks
// crosses a real, shapeable rack uplink. Nothing is created in the root
// namespace, so deleting the testbed's namespaces removes every link,
// bridge and qdisc with them.
//
// Shaping is per destination class, in both directions:
//   - uploads: an htb tree on the host's eth0 (inside its namespace) with
//     a parent class at the NIC rate and children for "same rack" and
//     "other racks", chosen by u32 filters on the destination subnet;
//   - downloads: the same tree on the host's port in the core namespace
//     (the peer's egress), chosen by the source subnet, so a host's
//     download rate is capped too;
//   - rack uplinks: one htb class on each side of the rack's uplink pair.
//
// Latency, jitter and loss become netem qdiscs under the host's upload
// classes when the kernel has netem (the caller says whether it does).
// The SMARTH paper (seed 000, section V) throttled its nodes with tc the
// same way.
package netplan
