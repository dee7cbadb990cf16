package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/applogs"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/testcluster"
)

// Issue 26's job history and log aggregation, on a real secure cluster
// of processes (`cluster up`): alice's wordcount ends, the node managers
// upload its task logs to /app-logs/alice/JOB as alice; then
//   - RestartResourceManager: after `smarth cluster restart rm`, alice's
//     `job list`, `job status` (state, counters, attempts) and `job logs`
//     (read from the aggregated copy) still answer for the earlier job,
//     and bob gets none of it: not from the resource manager, not from the
//     DFS;
//   - KillNodeManager: every node manager that ran the job is killed with
//     SIGKILL, and `job logs` still prints every attempt's log.
func TestJobHistoryAndAggregatedLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster with resource and node managers skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	st, err := cluster.Up(ctx, cluster.Options{Home: home, Binary: bin, DataNodes: 2, NodeManagers: true,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", Detach: true})
	if err != nil {
		b, _ := os.ReadFile(filepath.Join(home, "logs", "resourcemanager.out"))
		t.Fatalf("%v\nresourcemanager.out:\n%s", err, b)
	}
	sec, err := st.Security()
	if err != nil {
		t.Fatal(err)
	}
	owner, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	w, err := owner.Create(ctx, "/hist-in/text", client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(strings.Repeat("to be or not to be\n", 2000)))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// alice and carol are not the cluster's owner: their jobs write under
	// /alice and /carol.
	for _, u := range []string{"alice", "carol"} {
		if err := owner.Mkdir(ctx, "/"+u, 0o755, true); err != nil {
			t.Fatal(err)
		}
		if err := owner.SetOwner(ctx, "/"+u, u, ""); err != nil {
			t.Fatal(err)
		}
	}
	secret, err := auth.LoadKey(cluster.IdentitySecretFile(home))
	if err != nil {
		t.Fatal(err)
	}
	tokens := map[string]string{}
	for _, u := range []string{"alice", "bob", "carol"} {
		tokens[u] = filepath.Join(t.TempDir(), u+".token")
		if err := auth.WriteTokenFile(tokens[u], auth.UserCredential(secret, u)); err != nil {
			t.Fatal(err)
		}
	}
	// as runs the smarth binary as user against this cluster.
	as := func(user string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = append(os.Environ(), "SMARTH_HOME="+home, cluster.EnvTokenFile+"="+tokens[user],
			"SMARTH_RESOURCEMANAGER=", "SMARTH_NAMENODE=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	alice, err := client.New(client.Config{NameNode: st.NameNode, Credential: auth.UserCredential(secret, "alice"), TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()

	// wordcount runs user's wordcount to success over fsys, the user's
	// DFS client; it returns the job client (closed with the test) and
	// the job's id.
	wordcount := func(user string, fsys *client.FileSystem, output string) (*jobclient.Client, string) {
		t.Helper()
		st, err := cluster.LoadState(home)
		if err != nil {
			t.Fatal(err)
		}
		jc, err := jobclient.New(jobclient.Config{ResourceManager: st.ResourceManager, FS: mapreduce.DFS(fsys),
			Registry: mapreduce.NewRegistry(apps.All()...), Credential: auth.UserCredential(secret, user), TLS: sec.TLS})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { jc.Close() })
		id, err := jc.Submit(ctx, "wordcount", map[string]string{"input": "/hist-in", "output": output, "reduces": "2"})
		if err != nil {
			t.Fatal(err)
		}
		if res, err := jc.Wait(ctx, id); err != nil || res.State != mapreduce.StateSucceeded {
			t.Fatalf("%s's job %s: %v %v", user, id, res, err)
		}
		return jc, id
	}
	// runJob runs alice's wordcount and waits until every node that ran
	// one of its attempts has uploaded their logs.
	runJob := func(output string) *mrpb.JobStatus {
		t.Helper()
		jc, id := wordcount("alice", alice, output)
		js, err := jc.Status(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := applogs.Dir("/app-logs", "alice", id); js.GetAggregatedLogDir() != want {
			t.Fatalf("job %s aggregates its logs in %q, want %s", id, js.GetAggregatedLogDir(), want)
		}
		want := map[string]bool{}
		for _, tk := range js.GetTasks() {
			for _, a := range tk.GetAttempts() {
				want[applogs.NodeFile(a.GetNodeId())] = true
			}
		}
		waitFor(t, "every node that ran "+id+" to aggregate its logs", func() bool {
			ls, err := alice.List(ctx, js.GetAggregatedLogDir())
			if err != nil {
				return false
			}
			got := 0
			for _, fi := range ls {
				if want[fi.Name] {
					got++
					if fi.Owner != "alice" || fi.Mode.Perm() != 0o600 {
						t.Fatalf("aggregated %s: owner %s mode %v, want alice 0600", fi.Path, fi.Owner, fi.Mode)
					}
				}
			}
			return got == len(want)
		})
		for _, d := range []string{"/app-logs/alice", js.GetAggregatedLogDir()} {
			fi, err := alice.Stat(ctx, d)
			if err != nil || fi.Owner != "alice" || fi.Mode.Perm() != 0o700 {
				t.Fatalf("%s: %+v %v, want alice's, 0700", d, fi, err)
			}
		}
		return js
	}
	// logsOK checks `job logs` printed every attempt of js from its
	// aggregated copy.
	logsOK := func(js *mrpb.JobStatus, out string) {
		t.Helper()
		for _, tk := range js.GetTasks() {
			for _, a := range tk.GetAttempts() {
				head := "==> " + a.GetAttemptId() + " on "
				i := strings.Index(out, head)
				if i < 0 {
					t.Fatalf("job logs does not print attempt %s:\n%s", a.GetAttemptId(), out)
				}
				rest := out[i:]
				if nl := strings.Index(rest, "<==\n"); nl < 0 || !strings.Contains(rest[:nl], "aggregated in "+js.GetAggregatedLogDir()+"/") {
					t.Fatalf("attempt %s's log is not the aggregated copy:\n%s", a.GetAttemptId(), out)
				}
				if !strings.Contains(rest, `task attempt starting" attempt=`+a.GetAttemptId()) {
					t.Fatalf("attempt %s's log lacks its start record:\n%s", a.GetAttemptId(), out)
				}
			}
		}
	}

	t.Run("RestartResourceManager", func(t *testing.T) {
		js := runJob("/alice/out-restart")
		id := js.GetJobId()
		if out, err := exec.CommandContext(ctx, bin, "cluster", "restart", "rm", "--home", home).CombinedOutput(); err != nil {
			t.Fatalf("cluster restart rm: %v\n%s", err, out)
		}
		out, err := as("alice", "job", "list")
		if err != nil || !strings.Contains(out, id) {
			t.Fatalf("alice's job list after the restart (%v) lacks %s:\n%s", err, id, out)
		}
		out, err = as("alice", "job", "status", id)
		if err != nil || !strings.Contains(out, "SUCCEEDED") {
			t.Fatalf("alice's job status %s after the restart: %v\n%s", id, err, out)
		}
		if !strings.Contains(out, "MAP_INPUT_RECORDS") {
			t.Fatalf("job status after the restart has no MAP_INPUT_RECORDS counter:\n%s", out)
		}
		for _, tk := range js.GetTasks() {
			for _, a := range tk.GetAttempts() {
				if !strings.Contains(out, a.GetAttemptId()) {
					t.Fatalf("job status after the restart lacks attempt %s:\n%s", a.GetAttemptId(), out)
				}
			}
		}
		out, err = as("alice", "job", "logs", id)
		if err != nil {
			t.Fatalf("alice's job logs %s after the restart: %v\n%s", id, err, out)
		}
		logsOK(js, out)

		// bob, with a valid login, gets nothing of alice's job.
		if out, err := as("bob", "job", "status", id); err == nil || !strings.Contains(out, "neither the job's owner") {
			t.Errorf("bob's job status of alice's %s: %v\n%s", id, err, out)
		}
		if out, err := as("bob", "job", "logs", id); err == nil || strings.Contains(out, "task attempt starting") {
			t.Errorf("bob's job logs of alice's %s: %v\n%s", id, err, out)
		}
		if out, err := as("bob", "job", "list"); err != nil || strings.Contains(out, id) {
			t.Errorf("bob's job list shows alice's %s (%v):\n%s", id, err, out)
		}
		for _, p := range []string{js.GetAggregatedLogDir(), "/app-logs/alice"} {
			if out, err := as("bob", "fs", "-ls", p); err == nil || !strings.Contains(strings.ToLower(out), "permission denied") {
				t.Errorf("bob lists %s: %v\n%s", p, err, out)
			}
		}
		// bob cannot plant a directory where alice's logs go, nor replace
		// hers: /app-logs is sticky.
		if out, err := as("bob", "fs", "-mv", "/app-logs/alice", "/app-logs/alice-old"); err == nil {
			t.Errorf("bob moved alice's log directory aside:\n%s", out)
		}
	})

	// bob, with a valid login, makes the directory carol's logs would go
	// to before carol ever ran a job (/app-logs is 1777): her node
	// managers refuse to write into it, so bob gets nothing of hers, and
	// her logs stay on the nodes, where job logs still finds them.
	t.Run("PlantedUserDirectory", func(t *testing.T) {
		if out, err := as("bob", "fs", "-mkdir", "/app-logs/carol"); err != nil {
			t.Fatalf("bob's mkdir /app-logs/carol: %v\n%s", err, out)
		}
		if out, err := as("bob", "fs", "-chmod", "777", "/app-logs/carol"); err != nil {
			t.Fatalf("bob's chmod: %v\n%s", err, out)
		}
		carol, err := client.New(client.Config{NameNode: st.NameNode, Credential: auth.UserCredential(secret, "carol"), TLS: sec.TLS})
		if err != nil {
			t.Fatal(err)
		}
		defer carol.Close()
		_, id := wordcount("carol", carol, "/carol/out")
		waitFor(t, "a node manager to refuse bob's /app-logs/carol", func() bool {
			for _, nm := range []string{"nm1", "nm2"} {
				b, _ := os.ReadFile(filepath.Join(home, "logs", nm+".log"))
				if strings.Contains(string(b), "/app-logs/carol is owned by bob, not carol") {
					return true
				}
			}
			return false
		})
		if ls, err := owner.List(ctx, "/app-logs/carol"); err != nil || len(ls) != 0 {
			t.Fatalf("bob's /app-logs/carol holds %v (%v), want nothing of carol's", ls, err)
		}
		out, err := as("carol", "job", "logs", id)
		if err != nil || !strings.Contains(out, `task attempt starting" attempt=`) || strings.Contains(out, "aggregated in") {
			t.Fatalf("carol's job logs, not aggregated, from the node managers: %v\n%s", err, out)
		}
	})

	t.Run("KillNodeManager", func(t *testing.T) {
		js := runJob("/alice/out-kill")
		id := js.GetJobId()
		st, err := cluster.LoadState(home)
		if err != nil {
			t.Fatal(err)
		}
		ran := map[string]bool{}
		for _, tk := range js.GetTasks() {
			for _, a := range tk.GetAttempts() {
				ran[a.GetNodeHost()] = true
			}
		}
		// Node managers are nm1.. on hosts dn1..: kill each that ran an
		// attempt.
		killed := 0
		for i := range 2 {
			if !ran[cluster.Hostname(i)] {
				continue
			}
			d, ok := st.Daemon("nm" + string(rune('1'+i)))
			if !ok || !d.Running() {
				t.Fatalf("node manager nm%d not running", i+1)
			}
			if err := syscall.Kill(d.PID, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the killed node manager to be gone", func() bool { return !d.Running() })
			killed++
		}
		if killed == 0 {
			t.Fatalf("no node manager ran job %s (%v)", id, ran)
		}
		out, err := as("alice", "job", "logs", id)
		if err != nil {
			t.Fatalf("alice's job logs %s with its node managers killed: %v\n%s", id, err, out)
		}
		logsOK(js, out)
	})
}

// waitFor polls cond until it holds, failing t after a minute with what
// it waited for.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling interval of a condition with a deadline
	}
}
