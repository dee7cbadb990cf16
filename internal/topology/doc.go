// Package topology is the vocabulary of where things are in a cluster: racks
// as slash-separated paths ("/rack-a"), the mapping from a datanode's hostname
// or IP to its rack, and the HDFS network distance between two places.
//
// It decides nothing about placement; internal/placement uses these names and
// distances to choose replica targets, and the namenode uses Distance to sort
// block locations for readers. The model is HDFS's two-level NetworkTopology
// (node, rack): distance 0 on the same node, 2 within a rack, 4 across racks.
package topology
