// Package daemonplan decides which smarth daemons a testbed starts on which
// host, with which config, in which order: the namenode first, then the
// datanodes, then the resource manager, then the node managers. Each host
// has its own address, so every daemon listens on its role's well-known
// port (8020, 9866, ...) on that address and nothing is picked at random.
// The namenode's rack map names every host by hostname and by address, so
// placement (seed 000, Alg. 1: second replica on another rack) sees the
// testbed's racks; node managers take their datanode's hostname, which is
// how data locality is matched (seed 003).
//
// The namenode role on 3 or 5 hosts makes them an HA group nn1..nnN (file
// order; nn1 bootstraps), each also on the raft port 8485, and puts TLS on
// every daemon, as the topology's tls key does: each daemon is given a
// certificate of its own to be issued (Daemon.Cert), the members' named
// after their ids, which is what the group's raft port admits. Every
// daemon and tool is given the members as a comma list.
//
// With latency_mode "proxy" each daemon listens on 127.0.0.1 instead, and a
// delay proxy on the host's address forwards to it (see
// internal/testbed/delayproxy).
//
// Each daemon's config is built as its typed config
// (daemonconf.NameNodeConfig and the others) with the topology file's
// extra keys merged over it by daemonconf.Keys, which refuses a key the
// daemon does not have.
//
// What it leaves to others: writing the files and starting the processes
// (internal/testbed), and the daemons' meaning of each key (their own
// packages; the keys are daemonconf's, the daemon-config contract).
package daemonplan
