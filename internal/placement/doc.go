// Package placement decides which datanodes receive the replicas of a block.
//
// It is pure: a Policy gets a read-only view of the datanodes (rack, load,
// free space, liveness), a Request (how many targets, who writes, which nodes
// are excluded or already chosen, the writer's speed records) and a seeded
// *rand.Rand, and returns an ordered pipeline. The namenode builds the view
// from its datanode table, calls the policy under its lock, and does all I/O.
//
// Policies, chosen by name from Policies:
//
//   - RackAware is HDFS's default (BlockPlacementPolicyDefault): the writer's
//     own node if it is a datanode, else a random non-busy node of the
//     writer's rack when the topology mapping places the writer
//     (chooseLocalRack; an off-cluster client "in rack a"), else a random
//     non-busy node; the second
//     replica on another rack; the third on the second's rack; further
//     replicas random, at most (replicas-1)/racks+2 per rack. "Non-busy" is
//     HDFS's considerLoad: a node with more than twice the average number of
//     active transfers is skipped. On a single rack every replica lands in it.
//   - SpeedAware is SMARTH's global optimization (seed 000, Algorithm 1): when
//     the writer has speed records, the first target is random among the
//     writer's top-n datanodes by reported speed, n = live datanodes /
//     replication; the rest are placed as RackAware given that first node.
//     Without records it is exactly RackAware. "speedaware" also reserves
//     the top-n for first positions (later replicas avoid them while the
//     rack rule allows), so a client's next pipeline finds a fast free
//     first node although its open pipelines hold their nodes, and ranks
//     nodes the client never measured above measured ones, so each is tried
//     once, but only in the nearest link class (the writer's own rack while
//     it has datanodes; elsewhere an unmeasured node is rated like the
//     measured nodes behind the same link). It ranks nodes so from the
//     first block, records or not, and keeps a new pipeline's cross-rack
//     hop off a host that already carries one of the writer's open
//     pipelines (Request.Open). "speedaware-paper" is the algorithm as
//     printed.
//   - MinCut ("mincut"): for writes that keep several blocks in flight
//     (multipipeline-concurrent), the pipeline that maximises the fair-share
//     rate (Rate) of the writer's open pipelines, the new one and those
//     still to come on free rack-mates, over the writer's NIC, every host's
//     cross-rack rate and the racks' uplinks (Links; estimated from the
//     speed records by RecordLinks when not given, with a prior before
//     any record across racks: rack-mates nearer than hosts across racks,
//     each host with a cross-rack link of its own). Later replicas keep
//     off the writer's rack-mates where the rack rule allows; where rates
//     tie, a pipeline that begins on a rack-mate rather than behind the
//     writer's own cross-rack link wins.
//
// It leaves to others: where the speed records come from (the namenode keeps
// them per client host from client heartbeats), where the writer is (the
// namenode resolves its rack through internal/topology's mapping), whether too few targets is an error (the
// namenode compares with min_replication), and the reader-side ordering of
// locations (topology.Distance).
package placement
