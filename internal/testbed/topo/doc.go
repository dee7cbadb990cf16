// Package topo reads and checks testbed topology files: the racks and hosts
// of an emulated cluster, each host's roles (namenode, datanode, client,
// resourcemanager, nodemanager), its link rates (NIC, to its own rack, to
// other racks), optional latency, jitter and loss, and optional disk
// bandwidth caps. It assigns every rack a /24 and every host an address from
// one private /16 that exists only inside the testbed's namespaces, and it
// computes the rate a transfer between two hosts should reach, which is what
// `smarth testbed check` compares its measurements with.
//
// What it decides: the file format and its validation, units of rates
// ("50mbit", "50Mbit/s", "40MB/s"; a number without a unit is an error, and
// the ambiguous "mbps" is refused), addresses, rack paths, and the expected
// rate of a path (the smallest of the sender's and receiver's NIC and class
// rates and the racks' uplinks).
//
// What it leaves to others: building the namespaces, links and tc classes
// (internal/testbed/netplan), running anything (internal/testbed).
//
// The scenarios follow the SMARTH paper (seed 000, section V): two racks with
// throttled links between them, nodes throttled with tc, and a heterogeneous
// cluster of EC2 small (~216 Mbit/s) and medium/large (~376 Mbit/s) nodes.
package topo
