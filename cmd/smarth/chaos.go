package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/chaos"
)

var _ = registerCommands(func() []*cobra.Command { return []*cobra.Command{newChaosCmd()} })

func newChaosCmd() *cobra.Command {
	var (
		o        chaos.Options
		kinds    string
		nnFaults string
		jsonOut  string
		tb       testbedChaos
	)
	c := &cobra.Command{
		Use:   "chaos",
		Short: "Kill and restart daemons of the local cluster under load, then verify every acknowledged operation",
		Long: `Runs a fault-injection campaign against the local cluster (smarth cluster up;
--home, else $SMARTH_HOME, else ./.smarth). For --duration it keeps a mixed load
going — puts (classic and multi-pipeline writers), gets, renames and, when the
cluster has a resource manager, wordcount and teragen jobs — while every
--interval it SIGKILLs a random namenode, datanode or node manager and starts it
again as 'smarth cluster start' does, one daemon down at a time.

Every acknowledged operation is recorded with what it promised: a put that
closed with the SHA-256 of its bytes, a rename with the new name, a SUCCEEDED
job with its expected output (wordcount's exact counts; teragen's rows and the
CRC32 sum the job reported). After the load, with every daemon back, each
promise is checked against what the cluster serves: each file whole under
its name, every old name of an acknowledged rename absent, every acknowledged
delete still deleted, every job's output as expected. A file the load owns
that is found missing during the load (by a get, rename or delete) is lost at
once. It prints ops done, faults injected, the unverifiable promises (a file
absent after a delete of it failed without a verdict) and the lost ones, each
with the history of operations on its file, and exits 1 if any was lost (or a
get served wrong bytes, or a namenode failover saw no write acknowledged within
3 minutes), 2 on bad usage.

On an HA cluster (smarth cluster up --namenodes 3) a namenode fault always hits
the active namenode, found by asking each member: SIGKILL and SIGSTOP in turn
(--namenode-faults). A SIGSTOPped active is resumed --stop-hold after another
namenode is active; it must step down (or exit, if it held edits never
committed, and is then restarted). For every failover the run times, from the
signal, the first write acknowledged through the group (a client creating empty
files, as HDFS failover measurements do) and another namenode answering ACTIVE,
and prints p50, p99 and max of each per fault kind.

The run works under --dir in the DFS (default /chaos/<start time>) and leaves
it there for inspection. Its data stays bounded: beyond --max-files acknowledged
files the load also deletes (an acknowledged delete must stay deleted), and a
succeeded job's output is verified and removed once --keep-jobs newer ones exist.
The first Ctrl-C ends the load early and still verifies; a second abandons it.

After the checks, every replica of every acknowledged file is read from its own
datanode (no failover) once the namenode lists full replication: the replicas of
a block must agree with each other and with the acknowledged bytes; a block
whose replicas differ is reported DIVERGED (and the exit status is 1).

With --testbed NAME the faults are network partitions on a running testbed
(smarth testbed up) instead of SIGKILLs: every --interval a random host, or a
whole rack's uplink, is cut off for --min-cut to --max-cut (packets dropped both
ways) and healed; the run prints which datanodes the namenode declared dead
during each cut. The load runs inside the testbed's first client host (the
command re-runs itself there), so a cut of that host partitions the client.`,
		Example: `  smarth cluster up --datanodes 3 --block-size 1MiB
  smarth chaos --duration 30m --interval 20s
  smarth cluster up --namenodes 3 --nodemanagers=false --home /tmp/ha
  smarth chaos --home /tmp/ha --duration 30m --interval 10s --kinds namenode --report-json ha.json
  smarth chaos --home /tmp/c1 --duration 2m --interval 5s --kinds datanode --seed 42 --no-jobs
  sudo smarth testbed up testbed/two-rack-100.yaml
  sudo smarth chaos --testbed two-rack-100 --duration 15m --interval 60s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Duration <= 0 || o.Interval <= 0 {
				return usageErr("--duration and --interval must be positive")
			}
			if tb.name != "" {
				if kinds != "" || o.Home != "" {
					return usageErr("--testbed makes network partitions on a testbed: --kinds and --home are for a local cluster")
				}
				done, err := tb.setup(cmd, &o)
				if done || err != nil {
					return err
				}
			}
			if kinds != "" {
				o.Kinds = strings.Split(kinds, ",")
				for _, k := range o.Kinds {
					if k != "namenode" && k != "datanode" && k != "nodemanager" {
						return usageErr("--kinds: %q is not namenode, datanode or nodemanager", k)
					}
				}
			}
			if nnFaults != "" {
				o.NameNodeFaults = strings.Split(strings.ToUpper(nnFaults), ",")
				for _, k := range o.NameNodeFaults {
					if k != chaos.FaultKill && k != chaos.FaultStop {
						return usageErr("--namenode-faults: %q is not sigkill or sigstop", strings.ToLower(k))
					}
				}
			}
			o.Out = cmd.ErrOrStderr()
			// The first Ctrl-C ends the load early and still verifies;
			// a second abandons the run.
			ctx, cancel := context.WithCancel(cmd.Context())
			defer cancel()
			stopLoad := make(chan struct{})
			o.Stop = stopLoad
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			go func() {
				select {
				case <-sigs:
					close(stopLoad)
				case <-ctx.Done():
					return
				}
				select {
				case <-sigs:
					cancel()
				case <-ctx.Done():
				}
			}()
			rep, err := chaos.Run(ctx, o)
			if rep != nil {
				rep.Print(cmd.OutOrStdout())
				if jsonOut != "" {
					if werr := writeReportJSON(jsonOut, rep); werr != nil {
						err = errors.Join(err, werr)
					}
				}
			}
			if err != nil {
				return err
			}
			if len(rep.Lost) > 0 || len(rep.Diverged) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("chaos: %d acknowledged operations lost, %d blocks with diverged replicas", len(rep.Lost), len(rep.Diverged))}
			}
			if rep.Acked == 0 {
				return &exitError{code: 1, err: errors.New("chaos: no operation was acknowledged; nothing was verified")}
			}
			if n := rep.FailedFailovers(); n > 0 {
				return &exitError{code: 1, err: fmt.Errorf("chaos: %d namenode failovers saw no write acknowledged within 3 minutes", n)}
			}
			return nil
		},
	}
	f := c.Flags()
	f.StringVar(&o.Home, "home", "", "cluster home (default $SMARTH_HOME, else ./.smarth)")
	f.DurationVar(&o.Duration, "duration", 5*time.Minute, "how long to run load and faults")
	f.DurationVar(&o.Interval, "interval", 20*time.Second, "time between a restarted daemon being ready and the next kill (±25%)")
	f.DurationVar(&o.MaxDown, "max-down", 0, "longest a killed daemon stays down before its restart (default interval/2)")
	f.Uint64Var(&o.Seed, "seed", 0, "seed of the load and fault choices (default: from the clock; printed)")
	f.IntVar(&o.Workers, "workers", 3, "file-load goroutines (odd ones write in multipipeline mode)")
	f.BoolVar(&o.NoJobs, "no-jobs", false, "run no MapReduce jobs")
	f.BoolVar(&o.ObserverReads, "observer-reads", false, "on an HA cluster: every file worker but the first reads through the standbys (observer reads), with an msync before reading a file another worker wrote")
	f.StringVar(&kinds, "kinds", "", "comma-separated kinds of daemon to kill (default namenode,datanode,nodemanager)")
	f.StringVar(&nnFaults, "namenode-faults", "sigkill,sigstop", "on an HA cluster (cluster up --namenodes 3): faults of the active namenode, made in turn: sigkill (a crash; restarted after the outage), sigstop (a hung host; SIGCONT after the others elected and the outage)")
	f.DurationVar(&o.StopHold, "stop-hold", 10*time.Second, "with sigstop: how long the frozen active stays frozen after another namenode is active")
	f.StringVar(&jsonOut, "report-json", "", "also write the report (ops, faults, failover percentiles, losses) as JSON to this file")
	f.StringVar(&o.Dir, "dir", "", "DFS directory of the run (default /chaos/<start time>)")
	f.Int64Var(&o.MaxFileSize, "max-file-size", 3<<20, "largest file a put writes, in bytes")
	f.IntVar(&o.MaxFiles, "max-files", 300, "acknowledged files kept; beyond it the load deletes files too")
	f.IntVar(&o.KeepJobs, "keep-jobs", 20, "succeeded jobs whose output is kept for the final check (older ones are checked and removed)")
	f.StringVar(&tb.name, "testbed", "", "make network partitions on this testbed instead of killing daemons (runs the load inside its first client host)")
	f.StringVar(&tb.cuts, "cuts", "", "with --testbed: comma-separated hosts (dn1) and racks (rack:rack-b) that may be cut off (default every host and rack)")
	f.DurationVar(&tb.minCut, "min-cut", 10*time.Second, "with --testbed: shortest partition")
	f.DurationVar(&tb.maxCut, "max-cut", 60*time.Second, "with --testbed: longest partition (longer than the namenode's dead_node_timeout, 30s by default, gets datanodes declared dead)")
	f.DurationVar(&o.Settle, "settle", 5*time.Minute, "after the load: how long to wait for daemons and replicas to come back while verifying")
	return c
}

// writeReportJSON writes a chaos report as indented JSON (durations in
// nanoseconds, as Go encodes them).
func writeReportJSON(path string, rep *chaos.Report) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("--report-json: %w", err)
	}
	return nil
}
