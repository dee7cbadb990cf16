package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/units"
)

// newAdminBalancerCmd is HDFS's `hdfs balancer -threshold N`.
func newAdminBalancerCmd(a *adminConn) *cobra.Command {
	var threshold float64
	var iterations int
	var wait time.Duration
	c := &cobra.Command{
		Use:   "balancer",
		Short: "Move block replicas until every datanode's use is within --threshold percent of the cluster's (superusers)",
		Long: `Balance the datanodes' disk use, as hdfs balancer does: the cluster's use is
the sum of DFS used over the sum of capacity of the live, in-service datanodes;
a datanode above it by more than --threshold percentage points gives replicas
to one below it by more than that (or, when only one side is out of range, to
or from the datanodes on the other side of the mean). The namenode checks each
move (no fewer racks for the block, no copy where one is) and carries it out as
a re-replication followed by the deletion of the source's replica. It runs in
iterations until the cluster is balanced, nothing can be moved, or
--iterations is reached.`,
		Example: `  smarth admin balancer
  smarth admin balancer --threshold 5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if threshold <= 0 || threshold > 100 {
				return usageErr("balancer: --threshold %v: want a number of percentage points in (0, 100]", threshold)
			}
			return runBalancer(cmd.Context(), a, cmd.OutOrStdout(), threshold, iterations, wait)
		},
	}
	c.Flags().Float64Var(&threshold, "threshold", 10, "percentage points of disk use a datanode may differ from the cluster's (HDFS's -threshold)")
	c.Flags().IntVar(&iterations, "iterations", 50, "stop after this many iterations")
	c.Flags().DurationVar(&wait, "move-timeout", 5*time.Minute, "how long one iteration waits for its moves")
	return c
}

// balanceNode is one datanode as the balancer sees it.
type balanceNode struct {
	id, host, rack string
	used, capacity int64
	util           float64 // percent
}

// balancePlan classifies the live, in-service datanodes by their use
// against the cluster's: sources give replicas, targets take them, each
// with how many bytes (HDFS's over/above-average and under/below-average
// groups). Both empty: balanced.
func balancePlan(nodes []*dfspb.DatanodeInfo, threshold float64) (avg float64, sources, targets map[*balanceNode]int64) {
	var all []*balanceNode
	var used, capacity int64
	for _, d := range nodes {
		if d.GetState() != dfspb.DatanodeState_LIVE || d.GetAdminState() != dfspb.AdminState_NORMAL || d.GetCapacity() <= 0 {
			continue
		}
		n := &balanceNode{id: d.GetId(), host: d.GetHostname(), rack: d.GetRack(), used: d.GetDfsUsed(), capacity: d.GetCapacity()}
		n.util = 100 * float64(n.used) / float64(n.capacity)
		all = append(all, n)
		used, capacity = used+n.used, capacity+n.capacity
	}
	if capacity == 0 {
		return 0, nil, nil
	}
	avg = 100 * float64(used) / float64(capacity)
	over, under := map[*balanceNode]int64{}, map[*balanceNode]int64{}
	above, below := map[*balanceNode]int64{}, map[*balanceNode]int64{}
	for _, n := range all {
		bytes := int64((n.util - avg) / 100 * float64(n.capacity))
		switch {
		case n.util > avg+threshold:
			over[n] = bytes
		case n.util < avg-threshold:
			under[n] = -bytes
		case n.util > avg:
			above[n] = bytes
		default:
			below[n] = -bytes
		}
	}
	switch {
	case len(over) == 0 && len(under) == 0:
		return avg, nil, nil
	case len(over) == 0:
		return avg, above, under
	case len(under) == 0:
		return avg, over, below
	}
	return avg, over, under
}

func runBalancer(ctx context.Context, a *adminConn, w io.Writer, threshold float64, iterations int, wait time.Duration) error {
	start := time.Now()
	var moved int64
	fmt.Fprintln(w, "Time Stamp               Iteration#  Bytes Already Moved  Bytes Left To Move  Bytes Being Moved")
	idle := 0
	for it := 0; it < iterations; it++ {
		rctx, cancel := a.callCtx(ctx)
		rep, err := a.rpc.GetDatanodeReport(rctx, &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
		cancel()
		if err != nil {
			return a.explain(err)
		}
		avg, sources, targets := balancePlan(rep.GetDatanodes(), threshold)
		if len(sources) == 0 || len(targets) == 0 {
			fmt.Fprintf(w, "The cluster is balanced (use %.1f%%, every datanode within %.0f points). Exiting...\n", avg, threshold)
			fmt.Fprintf(w, "Balancing took %s\n", time.Since(start).Round(time.Second))
			return nil
		}
		var left int64
		for _, b := range sources {
			left += b
		}
		batch, err := a.scheduleMoves(ctx, sources, targets)
		if err != nil {
			return err
		}
		var being int64
		for _, m := range batch {
			being += m.bytes
		}
		fmt.Fprintf(w, "%-24s %10d  %19s  %18s  %17s\n", time.Now().Format("Jan 2, 2006 3:04:05 PM"), it,
			units.FormatSize(moved), units.FormatSize(left), units.FormatSize(being))
		if len(batch) == 0 {
			idle++
			if idle >= 5 {
				return fmt.Errorf("No block has been moved for 5 iterations. Exiting...")
			}
			time.Sleep(time.Second) // the sources' transfer slots free up
			continue
		}
		idle = 0
		if err := a.waitMoves(ctx, batch, wait); err != nil {
			return err
		}
		moved += being
	}
	return fmt.Errorf("the cluster is not balanced after %d iterations", iterations)
}

type move struct {
	block          uint64
	bytes          int64
	source, target *balanceNode
}

// scheduleMoves asks the namenode for each source's blocks and schedules
// moves to targets with room, same rack first, until the sources' bytes
// or the targets' room run out.
func (a *adminConn) scheduleMoves(ctx context.Context, sources, targets map[*balanceNode]int64) ([]move, error) {
	var srcs, tgts []*balanceNode
	for n := range sources {
		srcs = append(srcs, n)
	}
	for n := range targets {
		tgts = append(tgts, n)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].util > srcs[j].util })
	var out []move
	for _, s := range srcs {
		rctx, cancel := a.callCtx(ctx)
		resp, err := a.rpc.GetBlocks(rctx, &dfspb.GetBlocksRequest{DatanodeId: s.id, MaxBytes: max(sources[s], 1)})
		cancel()
		if err != nil {
			return nil, a.explain(err)
		}
		for _, b := range resp.GetBlocks() {
			if sources[s] <= 0 {
				break
			}
			// The target with the most room that does not hold the
			// block, on the source's rack if one is.
			sort.Slice(tgts, func(i, j int) bool {
				si, sj := tgts[i].rack == s.rack, tgts[j].rack == s.rack
				if si != sj {
					return si
				}
				return targets[tgts[i]] > targets[tgts[j]]
			})
			for _, t := range tgts {
				if targets[t] < b.GetNumBytes() || slices.Contains(b.GetHolders(), t.id) {
					continue
				}
				rctx, cancel := a.callCtx(ctx)
				_, err := a.rpc.MoveReplica(rctx, &dfspb.MoveReplicaRequest{BlockId: b.GetBlockId(), SourceId: s.id, TargetId: t.id})
				cancel()
				if err != nil {
					if status.Code(err) == codes.PermissionDenied {
						return nil, a.explain(err)
					}
					continue // refused (racks, busy source): another target or block
				}
				out = append(out, move{block: b.GetBlockId(), bytes: b.GetNumBytes(), source: s, target: t})
				sources[s] -= b.GetNumBytes()
				targets[t] -= b.GetNumBytes()
				break
			}
		}
	}
	return out, nil
}

// waitMoves waits until every move's source no longer holds its block
// (the namenode deletes the source's replica once the target reported
// the copy), then for two more heartbeats so that the next iteration
// sees the datanodes' new use.
func (a *adminConn) waitMoves(ctx context.Context, batch []move, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	pending := map[uint64]move{}
	for _, m := range batch {
		pending[m.block] = m
	}
	for len(pending) > 0 {
		if time.Now().After(deadline) {
			return nil // the namenode retries or drops them; the next iteration re-plans
		}
		bySource := map[string][]uint64{}
		for id, m := range pending {
			bySource[m.source.id] = append(bySource[m.source.id], id)
		}
		for src, ids := range bySource {
			rctx, cancel := a.callCtx(ctx)
			resp, err := a.rpc.GetBlocks(rctx, &dfspb.GetBlocksRequest{DatanodeId: src, MaxBytes: 1 << 62, Only: ids})
			cancel()
			if err != nil {
				return a.explain(err)
			}
			still := map[uint64]bool{}
			for _, b := range resp.GetBlocks() {
				still[b.GetBlockId()] = true
			}
			for _, id := range ids {
				if !still[id] {
					delete(pending, id)
				}
			}
		}
		if len(pending) > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond): // poll the namenode
			}
		}
	}
	since := time.Now().UnixMilli()
	for round := 0; round < 2; round++ {
		for {
			rctx, cancel := a.callCtx(ctx)
			rep, err := a.rpc.GetDatanodeReport(rctx, &dfspb.GetDatanodeReportRequest{State: dfspb.DatanodeState_LIVE})
			cancel()
			if err != nil {
				return a.explain(err)
			}
			fresh := true
			for _, d := range rep.GetDatanodes() {
				if d.GetLastHeartbeatUnixMs() <= since {
					fresh = false
				}
			}
			if fresh || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond) // poll for the next heartbeats
		}
		since = time.Now().UnixMilli()
	}
	return nil
}

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newBalancerCmd()} })

// newBalancerCmd is `smarth balancer`, as `hdfs balancer` is a command of
// its own; the same as `smarth admin balancer`.
func newBalancerCmd() *cobra.Command {
	a := &adminConn{}
	c := newAdminBalancerCmd(a)
	c.Example = `  smarth balancer
  smarth balancer --threshold 5 --namenode 10.0.0.1:8020`
	c.PreRunE = func(*cobra.Command, []string) error { return a.connect() }
	c.PostRunE = func(*cobra.Command, []string) error { return a.conn.Close() }
	c.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageErr("%v", err) })
	c.Flags().StringVar(&a.addr, "namenode", "", "namenode host:port (default $SMARTH_NAMENODE, the local cluster, else 127.0.0.1:8020)")
	c.Flags().StringVar(&a.user, "user", "", "act as this user (default: the OS user)")
	return c
}
