package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"smarth/internal/client"
	"smarth/internal/rpc/dfspb"
)

// A deleted file's replicas leave the datanodes later: the namenode hands
// each datanode its invalidate command in the reply to its next
// heartbeat, up to one heartbeat interval (3 s) after the delete, and the
// datanode then unlinks them. Deleting a previous run's file (or letting
// Create's overwrite delete it) at the start of a timed upload so lands
// the unlinking of every replica of that file (1.5 GiB for 512 MiB at
// replication 3) at a random moment of the upload or just after it: on
// this project's 2-core VM, 512 MiB uploads took about 0.5 s longer when
// it fell inside the upload, which made two clusters look 12-17% apart
// (docs/benchmarks.md, "Secure by default and TLS: cost"). So Put deletes
// first and waits for the replicas to go before it settles the page cache
// and starts the clock.

// clearTarget deletes p when it exists and, when this or an earlier
// delete (deleted) has not been waited for, waits until the datanodes
// have deleted the replicas.
func clearTarget(ctx context.Context, fsys *client.FileSystem, p string, deleted bool) error {
	if _, err := fsys.Stat(ctx, p); err == nil {
		if err := fsys.Delete(ctx, p, false); err != nil {
			return err
		}
		deleted = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !deleted {
		return nil
	}
	return awaitInvalidation(ctx, fsys, p)
}

// awaitInvalidation waits until every live datanode has sent the namenode
// two heartbeats since it was called: the reply to the first carries the
// node's invalidate command for what was deleted before the call, and a
// datanode runs its commands before it sends its next heartbeat (the
// namenode records only heartbeats as last_heartbeat). It gives up, with
// an error naming the node, after ten heartbeat intervals.
func awaitInvalidation(ctx context.Context, fsys *client.FileSystem, deleted string) error {
	interval := 3 * time.Second
	if d, err := fsys.Namenode().GetServerDefaults(ctx, &dfspb.GetServerDefaultsRequest{}); err == nil && d.GetHeartbeatIntervalMs() > 0 {
		interval = time.Duration(d.GetHeartbeatIntervalMs()) * time.Millisecond
	}
	nodes, err := fsys.Datanodes(ctx, dfspb.DatanodeState_LIVE)
	if err != nil {
		return err
	}
	last := map[string]int64{}
	beats := map[string]int{}
	for _, n := range nodes {
		last[n.GetId()] = n.GetLastHeartbeatUnixMs()
	}
	// Poll well within a heartbeat interval, so that no two heartbeats
	// of a node fall between two polls (missing one would only wait
	// longer).
	poll := min(interval/10, 100*time.Millisecond)
	deadline := time.Now().Add(10 * interval)
	for {
		waiting := ""
		for id := range last {
			if beats[id] < 2 {
				waiting = id
			}
		}
		if waiting == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bench: datanode %s sent fewer than 2 heartbeats in %v after %s was deleted; its replicas may still be being deleted", waiting, 10*interval, deleted)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		nodes, err := fsys.Datanodes(ctx, dfspb.DatanodeState_DATANODE_STATE_UNSPECIFIED)
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if prev, ok := last[n.GetId()]; ok && n.GetLastHeartbeatUnixMs() != prev {
				last[n.GetId()] = n.GetLastHeartbeatUnixMs()
				beats[n.GetId()]++
			}
		}
	}
}
