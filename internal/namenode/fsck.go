package namenode

import (
	"context"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// fsck reports the blocks and replicas of every file under path.
func (nn *NameNode) fsck(ctx context.Context, path string) (*dfspb.FsckResponse, error) {
	p, err := cleanPath("fsck", path)
	if err != nil {
		return nil, err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	root, err := nn.state.tree.Stat(callerOf(ctx), "fsck", p)
	if err != nil {
		return nil, statusOf(err)
	}
	resp := &dfspb.FsckResponse{}
	var walk func(n *namespace.INode)
	walk = func(n *namespace.INode) {
		if n.Dir {
			for _, c := range n.Children() {
				walk(c)
			}
			return
		}
		file := &dfspb.FsckFile{Status: fileStatus(n)}
		for _, b := range n.Blocks {
			fb := &dfspb.FsckBlock{Block: ext(b), Expected: uint32(b.Expected), LiveReplicas: b.Good(nn.isLive)}
			for _, r := range b.ReplicaList() {
				if r.Corrupt && nn.isLive(r.Node) {
					fb.CorruptReplicas = append(fb.CorruptReplicas, r.Node)
				}
			}
			file.Blocks = append(file.Blocks, fb)
			resp.TotalBlocks++
			if b.State != blockmap.Complete {
				continue // being written: judged when complete
			}
			// As HDFS fsck: a block is corrupt when every replica left is
			// corrupt, missing when none is left at all.
			switch live := len(fb.LiveReplicas); {
			case live == 0 && len(fb.CorruptReplicas) > 0:
				resp.Corrupt++
			case live == 0:
				resp.Missing++
			case live < b.Expected:
				resp.UnderReplicated++
			}
		}
		resp.Files = append(resp.Files, file)
	}
	walk(root)
	resp.Healthy = resp.Missing == 0 && resp.Corrupt == 0
	return resp, nil
}
