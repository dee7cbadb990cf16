package chaos

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"smarth/internal/client"
	"smarth/internal/datatransfer"
)

// checkReplicas reads every replica of every block of every acknowledged
// file that is still whole, each from its own datanode (no failover), once
// the namenode lists as many replicas as the file's replication: every
// replica of a block must hold the same bytes, and one replica of each
// block in turn must make up the acknowledged content. A block whose
// replicas differ, or one that cannot be read from the datanode that
// holds it, has diverged. The load is over and every daemon is back, so a
// difference is the system's, not the check's.
func (r *run) checkReplicas(ctx context.Context, fsys *client.FileSystem) {
	r.mu.Lock()
	var files []*ackedFile
	for _, f := range r.files {
		if f.alt == "" && !f.delInDoubt {
			files = append(files, f)
		}
	}
	r.mu.Unlock()
	slices.SortFunc(files, func(a, b *ackedFile) int { return a.id - b.id })
	r.logf("comparing every replica of %d files", len(files))
	var under []string
	for _, f := range files {
		st, err := fsys.Stat(ctx, f.path)
		if errors.Is(err, fs.ErrNotExist) {
			continue // verification has reported it
		}
		if err != nil {
			r.warn("replica check of %s: %v", f.path, err)
			continue
		}
		if !r.waitReplicated(ctx, fsys, f.path, int(st.Replication)) {
			under = append(under, f.path)
		}
		if d := r.compareReplicas(ctx, fsys, f); d != "" {
			r.mu.Lock()
			r.rep.Diverged = append(r.rep.Diverged, d)
			r.mu.Unlock()
			r.logf("DIVERGED %s", d)
		}
	}
	if len(under) > 0 {
		r.warn("%d files not back to full replication when compared (e.g. %s): their listed replicas were compared", len(under), under[0])
	}
}

// waitReplicated waits, for at most a minute, until the namenode lists
// want replicas of every block of p.
func (r *run) waitReplicated(ctx context.Context, fsys *client.FileSystem, p string, want int) bool {
	deadline := time.Now().Add(time.Minute)
	for {
		locs, err := fsys.BlockLocations(ctx, p, 0, 1<<62)
		ok := err == nil
		for _, l := range locs {
			ok = ok && len(l.Hosts) >= want
		}
		if ok || time.Now().After(deadline) || ctx.Err() != nil {
			return ok
		}
		sleepCtx(ctx, time.Second) // re-replication under way: a bounded poll
	}
}

// compareReplicas returns what diverged in f's replicas, "" if nothing.
// A replica that fails to read is read again (up to three times) before
// it counts: a datanode just back may still be loading its blocks.
func (r *run) compareReplicas(ctx context.Context, fsys *client.FileSystem, f *ackedFile) string {
	for attempt := 1; ; attempt++ {
		whole := sha256.New()
		var (
			problem  string
			block    uint64
			first    [32]byte
			blocks   int
			replicas int
			retry    bool
		)
		err := fsys.EachReplica(ctx, f.path, func(rp client.Replica) error {
			if rp.BlockID != block || blocks == 0 {
				block, blocks = rp.BlockID, blocks+1
				if rp.Err == nil {
					first = sha256.Sum256(rp.Data)
					whole.Write(rp.Data)
				}
			}
			if rp.Err != nil {
				// A checksum mismatch is the replica's own bytes: final.
				// Anything else (a datanode just back, a timeout) is
				// read again.
				var ce *datatransfer.ChecksumError
				retry = !errors.As(rp.Err, &ce)
				problem = fmt.Sprintf("block %d: the replica on %s cannot be read from it: %v", rp.BlockID, rp.Host, rp.Err)
				return errStopWalk
			}
			replicas++
			if int64(len(rp.Data)) != rp.Length || sha256.Sum256(rp.Data) != first {
				problem = fmt.Sprintf("block %d: the replica on %s (%d bytes) differs from the block's first replica (the namenode lists %d bytes)", rp.BlockID, rp.Host, len(rp.Data), rp.Length)
				return errStopWalk
			}
			return nil
		})
		if err != nil && err != errStopWalk {
			retry, problem = true, fmt.Sprintf("list and read its replicas: %v", err)
		}
		if problem == "" && [32]byte(whole.Sum(nil)) != f.sum {
			problem = "its blocks' replicas agree, but not with the acknowledged content"
		}
		if problem == "" {
			r.mu.Lock()
			r.rep.BlocksChecked += blocks
			r.rep.ReplicasChecked += replicas
			r.mu.Unlock()
			return ""
		}
		if !retry || attempt == 3 || ctx.Err() != nil {
			return f.path + ": " + problem
		}
		sleepCtx(ctx, 2*time.Second)
	}
}

var errStopWalk = errors.New("stop")
