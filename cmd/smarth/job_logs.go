package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os/user"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/applogs"
	"smarth/internal/pki"
	"smarth/internal/rpc/mrpb"
)

func newJobLogsCmd() *cobra.Command {
	var jf jobFlags
	var file string
	var last bool
	c := &cobra.Command{
		Use:   "logs JOB_ID [TASK]",
		Short: "Print the stdout/stderr of a job's task attempts: their aggregated copy in the DFS, else from the node managers that ran them",
		Long: `Print the logs a job's task attempts wrote. When a job ends, each node manager
that ran its attempts uploads their logs to the DFS, as the job's user, under
the resource manager's remote_app_log_dir (/app-logs/USER/JOB/HOST_PORT, 0600;
YARN's log aggregation): those are read, as you, so they are there after the
resource manager restarted or the node is gone, and only for the job's owner
(and the superuser). Attempts not aggregated (a running job, aggregation off
or not done yet) are fetched from their node manager, which keeps them for
its log_retention. Each header says where its log came from.

TASK picks one task or attempt: an attempt ID (attempt_JOB_m_000003_0), a task
ID (task_JOB_m_000003), or its short form m_000003 / r_000000 (also m3, r0).
Without TASK every attempt of the job is printed.`,
		Example: `  smarth job logs job_20250101120000_0001
  smarth job logs job_20250101120000_0001 m_000003
  smarth job logs job_20250101120000_0001 attempt_job_20250101120000_0001_r_000000_1 --file all`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usageErr("logs takes a job ID and optionally a task or attempt")
			}
			files, err := logFileNames(file)
			if err != nil {
				return err
			}
			var pick attemptFilter
			if len(args) == 2 {
				if pick, err = parseTaskArg(args[0], args[1]); err != nil {
					return err
				}
			}
			jc, closeAll, err := jf.client(nil, false, nil)
			if err != nil {
				return err
			}
			defer closeAll()
			st, err := jc.Status(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			nn := jf.nn
			if nn == "" {
				nn = cluster.DefaultNameNode()
			}
			tokenFile, tlsCfg, err := jobSecurity(nn)
			if err != nil {
				return err
			}
			proof, err := logProof(tokenFile)
			if err != nil {
				return err
			}
			agg := aggregatedLogs(cmd.Context(), cmd.ErrOrStderr(), nn, st, pick, files)
			return printJobLogs(cmd.Context(), cmd.OutOrStdout(), st, pick, files, last, tlsCfg, proof, agg)
		},
	}
	jf.add(c.Flags())
	c.Flags().StringVar(&file, "file", "stderr", "which log: stderr, stdout or all")
	c.Flags().BoolVar(&last, "last", false, "only each task's latest attempt")
	return c
}

func logFileNames(file string) ([]string, error) {
	switch file {
	case "stderr", "stdout":
		return []string{file}, nil
	case "all":
		return []string{"stdout", "stderr"}, nil
	}
	return nil, usageErr("--file %q: want stderr, stdout or all", file)
}

// attemptFilter picks attempts: an exact attempt ID, or a task's kind and
// index (index < 0: every task).
type attemptFilter struct {
	attempt string
	isMap   bool
	index   int
	set     bool
}

func (f attemptFilter) wants(t *mrpb.TaskStatus, a *mrpb.AttemptStatus) bool {
	switch {
	case !f.set:
		return true
	case f.attempt != "":
		return a.GetAttemptId() == f.attempt
	}
	return t.GetIsMap() == f.isMap && int(t.GetIndex()) == f.index
}

// parseTaskArg reads TASK: attempt_JOB_m_000003_0, task_JOB_m_000003,
// m_000003 or m3.
func parseTaskArg(job, s string) (attemptFilter, error) {
	if strings.HasPrefix(s, "attempt_") {
		return attemptFilter{attempt: s, set: true}, nil
	}
	short := strings.TrimPrefix(strings.TrimPrefix(s, "task_"+job+"_"), "task_")
	if len(short) >= 2 && (short[0] == 'm' || short[0] == 'r') {
		var idx int
		digits := strings.TrimPrefix(short[1:], "_")
		if _, err := fmt.Sscanf(digits, "%d", &idx); err == nil && idx >= 0 && strings.Trim(digits, "0123456789") == "" {
			return attemptFilter{isMap: short[0] == 'm', index: idx, set: true}, nil
		}
	}
	return attemptFilter{}, usageErr("task %q: want an attempt ID, a task ID, or m_000003 / r_000000", s)
}

// webProof is who `smarth job logs` is to the node managers, which show
// a job's logs only to its owner or an admin (they ask the resource
// manager): the token file's credential as a bearer token, or in simple
// mode the user name, as the job client names itself.
type webProof struct{ cred, user string }

func logProof(tokenFile string) (webProof, error) {
	cred, err := auth.LoadCredential(tokenFile)
	if err != nil {
		return webProof{}, err
	}
	p := webProof{cred: cred, user: auth.CredentialUser(cred)}
	if p.user == "" {
		if u, err := user.Current(); err == nil {
			p.user = u.Username
		}
	}
	return p, nil
}

func (p webProof) apply(req *http.Request) {
	if p.cred != "" {
		req.Header.Set("Authorization", "Bearer "+p.cred)
	}
	if p.user != "" {
		q := req.URL.Query()
		q.Set("user.name", p.user)
		req.URL.RawQuery = q.Encode()
	}
}

// printJobLogs fetches and prints the picked attempts' logs, each under a
// header naming the attempt, its node and its state.
// With TLS on (tlsCfg, the cluster's CA), the node managers serve HTTPS.
func printJobLogs(ctx context.Context, w io.Writer, st *mrpb.JobStatus, pick attemptFilter, files []string, last bool, tlsCfg *tls.Config, proof webProof, agg map[string]applogs.Log) error {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	scheme := pki.Scheme(tlsCfg)
	found := 0
	for _, t := range st.GetTasks() {
		attempts := t.GetAttempts()
		if last && len(attempts) > 0 {
			attempts = attempts[len(attempts)-1:]
		}
		for _, a := range attempts {
			if !pick.wants(t, a) {
				continue
			}
			found++
			for _, f := range files {
				if l, ok := agg[a.GetAttemptId()+"/"+f]; ok {
					fmt.Fprintf(w, "==> %s on %s (%s) %s, aggregated in %s <==\n", a.GetAttemptId(), a.GetNodeHost(), a.GetState(), f,
						path.Join(st.GetAggregatedLogDir(), l.Node))
					w.Write(l.Data)
					fmt.Fprintln(w)
					continue
				}
				fmt.Fprintf(w, "==> %s on %s (%s) %s <==\n", a.GetAttemptId(), a.GetNodeHost(), a.GetState(), f)
				if err := fetchLog(ctx, hc, scheme, w, st.GetJobId(), a, f, proof); err != nil {
					fmt.Fprintf(w, "[%v]\n", err)
				}
				fmt.Fprintln(w)
			}
		}
	}
	if found == 0 {
		if pick.set {
			return fmt.Errorf("job %s has no such task or attempt launched", st.GetJobId())
		}
		fmt.Fprintf(w, "job %s has launched no task attempts yet\n", st.GetJobId())
	}
	return nil
}

func fetchLog(ctx context.Context, hc *http.Client, scheme string, w io.Writer, job string, a *mrpb.AttemptStatus, file string, proof webProof) error {
	if a.GetNodeHttpAddr() == "" {
		return fmt.Errorf("node manager %s serves no HTTP: its logs cannot be fetched", a.GetNodeId())
	}
	url := fmt.Sprintf("%s://%s/logs/%s/%s/%s", scheme, a.GetNodeHttpAddr(), job, a.GetAttemptId(), file)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	proof.apply(req)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("node manager %s unreachable: %v", a.GetNodeHost(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%s: %s: %s", url, resp.Status, strings.TrimSpace(string(b)))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s (expired after the node's log_retention, or the node was replaced)", url, resp.Status)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}

// aggregatedLogs reads the picked attempts' aggregated logs of a job that
// ended, as the caller (the namenode refuses another user's), keyed
// ATTEMPT/FILE. Nothing aggregated yet, or off, is no error: those
// attempts come from their node managers; any other failure is said on
// errw and the node managers are asked instead.
func aggregatedLogs(ctx context.Context, errw io.Writer, nn string, st *mrpb.JobStatus, pick attemptFilter, files []string) map[string]applogs.Log {
	dir := st.GetAggregatedLogDir()
	if dir == "" || !finished(st.GetState()) {
		return nil
	}
	wanted := map[string]bool{}
	for _, t := range st.GetTasks() {
		for _, a := range t.GetAttempts() {
			if pick.wants(t, a) {
				wanted[a.GetAttemptId()] = true
			}
		}
	}
	fsys, err := newClient(client.Config{NameNode: nn})
	if err != nil {
		fmt.Fprintf(errw, "aggregated logs %s: %v (asking the node managers)\n", dir, err)
		return nil
	}
	defer fsys.Close()
	logs, err := applogs.Read(ctx, fsys, dir, func(attempt, file string) bool {
		return wanted[attempt] && slices.Contains(files, file)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(errw, "aggregated logs %s: %v (asking the node managers)\n", dir, err)
	}
	out := make(map[string]applogs.Log, len(logs))
	for _, l := range logs {
		out[l.Attempt+"/"+l.File] = l
	}
	return out
}

func finished(state string) bool {
	switch state {
	case mapreduce.StateSucceeded, mapreduce.StateFailed, mapreduce.StateKilled:
		return true
	}
	return false
}
