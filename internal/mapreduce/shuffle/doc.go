// Package shuffle moves map output between node managers over HTTP, as
// Hadoop's ShuffleHandler does: a node manager serves each finished map
// attempt's partitions from its local disk (sendfile where the kernel
// allows), and reduce tasks fetch one partition per request.
//
// It decides nothing about where map output lives: the resource manager
// tells each reduce task which node holds which map's output, and the
// task engine (package mapreduce) decides what to keep in memory.
package shuffle
