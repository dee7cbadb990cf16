package client

import "smarth/internal/rpc/dfspb"

// LocatedBlocks is the file's blocks as the namenode located them when
// the reader opened the file (or last fetched them again), in file order,
// with their replicas and block access tokens. The WebHDFS handler on a
// datanode uses it to read the blocks that datanode holds from its own
// store; the returned messages must not be modified.
func (r *FileReader) LocatedBlocks() []*dfspb.LocatedBlock {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*dfspb.LocatedBlock(nil), r.blocks...)
}
