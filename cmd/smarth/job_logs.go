package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os/user"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"smarth/internal/auth"
	"smarth/internal/cluster"
	"smarth/internal/pki"
	"smarth/internal/rpc/mrpb"
)

func newJobLogsCmd() *cobra.Command {
	var jf jobFlags
	var file string
	var last bool
	c := &cobra.Command{
		Use:   "logs JOB_ID [TASK]",
		Short: "Print the stdout/stderr of a job's task attempts, fetched from the node managers that ran them",
		Long: `Print the logs a job's task attempts left on the node managers that ran them
(kept there after the job ended, for the node managers' log_retention).

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
			return printJobLogs(cmd.Context(), cmd.OutOrStdout(), st, pick, files, last, tlsCfg, proof)
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
func printJobLogs(ctx context.Context, w io.Writer, st *mrpb.JobStatus, pick attemptFilter, files []string, last bool, tlsCfg *tls.Config, proof webProof) error {
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
