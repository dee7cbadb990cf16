// Package workload runs the experiments of seed 003 (cache affinity,
// block goodness and cache-local scheduling) as commands: the workloads
// W1-W7 of Table 3 and the dynamic workload of section 5.5 under the
// paper's five versions of Hadoop (`smarth bench workload`), and the
// cache affinity of one app (`smarth job affinity`, Table 1).
//
// What it decides: how an experiment is set up and measured. Each policy
// combination — nocache (none, delay), dlnr (pinned with a directive on
// every input added before the runs, delay), cllru (lru, cachelocal), clca
// (ca, cachelocal), clbg (bg, cachelocal, affinities learned online),
// clbgtable (bg, cachelocal, cache_affinity_source table: Table 1's or
// --affinity, as the paper ran it) — gets a fresh local cluster
// (internal/cluster: 4 datanodes and node managers, 200 MiB of block cache
// each, 16 MiB blocks, replication 2, drop-behind on for every combination
// so the no-cache baseline really reads the disk, and a disk read cap when
// given). Inputs are generated once per cluster; apps that share an input
// in Table 3 share its files. A static workload's apps are submitted at
// once and the run ends when all have finished; the workload runs several
// times back to back so caches warm up, as in the paper: the first run is
// reported as cold, the later ones as warm, and the warm mean of each app
// is normalized to the nocache combination's. Per combination it reports
// the namenode's cache hit ratio over the warm runs and, per app, the
// share of maps that were cache-local (CACHE_LOCAL_MAPS over
// TOTAL_LAUNCHED_MAPS, summed over every job of a multi-job app). While a
// run goes, the namenode's cache stats are sampled every second for the
// cached blocks per app over time (Fig. 13/14).
//
// Each app gets a 25% share of the map slots as in section 5.4, passed as
// the job parameter max_running_maps = share x datanodes x map slots: the
// resource manager's scheduler must enforce it (this package only asks).
// Every job also carries cache_affinity, the app's CA (Table 1's values
// unless the workload file or --affinity gives others), which map tasks
// report with their accesses for the ca and bg policies.
//
// Cache affinity (section 3.1) is CA = max(1 - hot/cold, 0) over median
// runtimes: cold with no directive on the input, hot after a directive on
// every input path is fully cached (ListCacheDirectives stats), runs
// interleaved cold, hot, cold, ... The cluster must run the pinned
// policy, so that nothing but the directive caches.
//
// A workload file (testbed/workloads/w1.yaml .. w7.yaml, dynamic.yaml):
//
//	name: w1                          # required
//	description: "..."
//	share: 0.25                       # each app's share of map slots; default 0.25
//	inputs:                           # generated once, shared by name
//	  text: {kind: text, size: 528MiB}   # kinds: text (randomtextwriter),
//	  hive: {kind: hive, size: 456MiB}   # hive (hivegen), points (kmeansgen),
//	                                     # graph (pagerankgen)
//	apps:                             # a static workload: submitted together
//	  - {app: aggregation, input: hive}
//	  - {app: grep, input: text, label: grep-th, affinity: 0.6, params: {regex: "th[a-z]+"}}
//
// or, for a dynamic workload, instead of apps:
//
//	duration: 15m
//	users:                            # each runs its apps in turn, one at a time,
//	  - name: scientist               # the next `every` after the previous start
//	    every: 60s
//	    apps: [{app: wordcount, input: text}, {app: kmeans, input: points}]
//
// Apps: aggregation and join (hive), grep, sort and wordcount (text),
// kmeans (points), pagerank (graph). Unknown keys, apps, kinds, inputs
// and mismatched kinds are errors naming the line's place in the file.
//
// What it leaves to others: the policies and the scheduler (internal/cache,
// internal/sched, the daemons), the apps (internal/mapreduce/apps) and the
// cluster launcher (internal/cluster).
package workload
