// Package topology is the vocabulary of where things are in a cluster: racks
// as slash-separated paths ("/rack-a"), the mapping from a hostname or IP to
// its rack, and the HDFS network distance between two places.
//
// The mapping (Resolver) is HDFS's DNSToSwitchMapping for datanodes and
// clients alike: an inline table and a table file (TableMapping,
// net.topology.table.file.name) and a script (ScriptBasedMapping,
// net.topology.script.file.name) run with a timeout, its answers cached and
// its unplaced answers retried after a minute. Lookup tells a placed address
// from an unplaced one, so the namenode can treat a client outside every
// rack as off-cluster rather than as a member of the default rack.
//
// It decides nothing about placement; internal/placement uses these names and
// distances to choose replica targets, and the namenode uses Distance to sort
// block locations for readers. The model is HDFS's two-level NetworkTopology
// (node, rack): distance 0 on the same node, 2 within a rack, 4 across racks.
package topology
