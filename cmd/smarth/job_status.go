package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/mapreduce"
	"smarth/internal/rpc/mrpb"
)

// submitDetached submits a job and prints its ID (alone on stdout, for
// scripts) and where to follow it (on stderr).
func submitDetached(cmd *cobra.Command, reg *mapreduce.Registry, rf runFlags, app string, params map[string]string) error {
	jc, closeAll, err := rf.client(reg, true, nil)
	if err != nil {
		return err
	}
	defer closeAll()
	staging, err := rf.ship(cmd.Context(), jc, params)
	if err != nil {
		return err
	}
	id, err := jc.Submit(cmd.Context(), app, params)
	if err != nil {
		if staging != "" {
			jc.FS().Delete(context.WithoutCancel(cmd.Context()), staging, true)
		}
		return paramUsage(err)
	}
	fmt.Fprintln(cmd.OutOrStdout(), id)
	if staging != "" {
		// Nobody follows the job to remove them when it ends.
		fmt.Fprintf(cmd.ErrOrStderr(), "shipped files staged in %s; remove it once the job has ended (smarth fs rm -r -skipTrash %s)\n", staging, staging)
	}
	if st, err := jc.Status(cmd.Context(), id); err == nil && st.GetTrackingUrl() != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "follow it with `smarth job status %s` or at %s\n", id, st.GetTrackingUrl())
	}
	return nil
}

// jobStates checks --state values (case-insensitive, comma-separated).
func jobStates(in []string) ([]string, error) {
	var out []string
	for _, s := range in {
		s = strings.ToUpper(strings.TrimSpace(s))
		switch s {
		case mapreduce.StatePending, mapreduce.StateRunning, mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled:
			out = append(out, s)
		default:
			return nil, usageErr("--state %q: want PENDING, RUNNING, SUCCEEDED, FAILED or KILLED", s)
		}
	}
	return out, nil
}

func msTime(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).Format("2006-01-02 15:04:05.000")
}

// printJobTimes shows when the job was submitted, started, finished and
// where its web page is.
func printJobTimes(w io.Writer, st *mrpb.JobStatus) {
	fmt.Fprintf(w, "submitted %s, started %s, finished %s\n", msTime(st.GetSubmitTimeMs()), msTime(st.GetStartTimeMs()),
		msTime(st.GetFinishTimeMs()))
	if u := st.GetTrackingUrl(); u != "" {
		fmt.Fprintf(w, "tracking URL: %s\n", u)
	}
	if e := st.GetError(); e != "" {
		fmt.Fprintf(w, "diagnostics: %s\n", e)
	}
}

// printTasks lists every task with its attempts: where each ran, its
// state, how long it took and why it failed.
func printTasks(w io.Writer, st *mrpb.JobStatus) {
	if len(st.GetTasks()) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tSTATE\tATTEMPTS\tATTEMPT\tNODE\tATTEMPT STATE\tTOOK\tERROR")
	for _, t := range st.GetTasks() {
		kind := "r"
		if t.GetIsMap() {
			kind = "m"
		}
		name := fmt.Sprintf("%s_%06d", kind, t.GetIndex())
		if len(t.GetAttempts()) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t0\t-\t-\t-\t-\t\n", name, t.GetState())
		}
		for i, a := range t.GetAttempts() {
			took := "-"
			if a.GetFinishTimeMs() != 0 {
				took = (time.Duration(a.GetFinishTimeMs()-a.GetStartTimeMs()) * time.Millisecond).String()
			} else if a.GetStartTimeMs() != 0 {
				took = (time.Duration(time.Now().UnixMilli()-a.GetStartTimeMs()) * time.Millisecond).String() + "+"
			}
			first := [3]string{name, t.GetState(), fmt.Sprint(len(t.GetAttempts()))}
			if i > 0 {
				first = [3]string{"", "", ""}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", first[0], first[1], first[2], a.GetAttemptId(), a.GetNodeHost(),
				a.GetState(), took, oneLine(a.GetError()))
		}
	}
	tw.Flush()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
