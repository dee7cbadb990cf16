package dfspb

// NonDfsUsed is the space of a datanode's volumes taken by something other
// than its replicas (other files on the disk, the file system's own
// overhead), as HDFS's DatanodeInfo.getNonDfsUsed: capacity less DFS used
// less remaining, never below zero (the three are sampled apart, so a
// replica written between them can make the difference negative). The
// reserve (du_reserved) is outside both capacity and remaining, so it is
// not counted here. Without it an operator sees capacity that is neither
// used nor remaining and cannot tell where it went.
func (d *DatanodeInfo) NonDfsUsed() int64 {
	return max(0, d.GetCapacity()-d.GetDfsUsed()-d.GetRemaining())
}
