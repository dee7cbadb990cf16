package namenode

import (
	"context"
	"slices"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// fsck reports the blocks and replicas of every file under path, with
// dirs each directory too, before what it holds.
func (nn *NameNode) fsck(ctx context.Context, path string, dirs bool) (*dfspb.FsckResponse, error) {
	p, err := cleanPath("fsck", path)
	if err != nil {
		return nil, err
	}
	nn.mu.RLock()
	defer nn.mu.RUnlock()
	root, err := nn.state.Tree().Stat(callerOf(ctx), "fsck", p)
	if err != nil {
		return nil, statusOf(err)
	}
	resp := &dfspb.FsckResponse{}
	var walk func(n *namespace.INode)
	walk = func(n *namespace.INode) {
		if n.IsDir() {
			if dirs {
				resp.Files = append(resp.Files, &dfspb.FsckFile{Status: fileStatus(n)})
			}
			for _, c := range n.Children() {
				walk(c)
			}
			return
		}
		file := &dfspb.FsckFile{Status: fileStatus(n)}
		for _, b := range n.Blocks {
			fb := &dfspb.FsckBlock{Block: ext(b), Expected: uint32(b.Expected), LiveReplicas: nn.fsckLive(b)}
			for _, r := range b.ReplicaList() {
				if r.Corrupt && nn.isLive(r.Node) {
					fb.CorruptReplicas = append(fb.CorruptReplicas, r.Node)
				}
			}
			file.Blocks = append(file.Blocks, fb)
			resp.TotalBlocks++
			// The summary counts what the listing shows (the CLI calls a
			// listed block with no live replica missing): as HDFS fsck, a
			// block is corrupt when every replica left is corrupt, missing
			// when none is left at all. That holds for the block of an
			// open file too: one whose pipeline died with it is lost
			// unless a node comes back.
			switch live := len(fb.LiveReplicas); {
			case live == 0 && len(fb.CorruptReplicas) > 0:
				resp.Corrupt++
			case live == 0:
				resp.Missing++
			case live < b.Expected && b.State == blockmap.Complete:
				// A block being written is judged for replication once
				// complete: its pipeline may legitimately have shrunk.
				resp.UnderReplicated++
			}
		}
		resp.Files = append(resp.Files, file)
	}
	walk(root)
	resp.Healthy = resp.Missing == 0 && resp.Corrupt == 0
	return resp, nil
}

// fsckLive lists where fsck counts a replica of b as live: good finalized
// replicas on live nodes and, while b is being written (under
// construction or committed), also the live nodes of its pipeline and
// live nodes that reported a replica being written at b's stamp — the
// places a reader of the open file is sent to (HDFS's expected
// locations), which report nothing until they finalize.
func (nn *NameNode) fsckLive(b *blockmap.Block) []string {
	live := b.Good(nn.isLive)
	if b.State == blockmap.Complete {
		return live
	}
	add := func(id string) {
		if nn.isLive(id) && !slices.Contains(live, id) {
			live = append(live, id)
		}
	}
	for _, r := range b.ReplicaList() {
		if !r.Corrupt && r.State == blockmap.BeingWritten && r.GS == b.GS {
			add(r.Node)
		}
	}
	for _, id := range b.Targets() {
		corrupt := slices.ContainsFunc(b.ReplicaList(), func(r blockmap.Replica) bool { return r.Node == id && r.Corrupt })
		if !corrupt {
			add(id)
		}
	}
	return live
}
