package cluster_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/diskperm"
	"smarth/internal/testcluster"
)

// TestHomePrivateAtRest: after a put and a job on a secure TLS cluster
// started under the usual umask 022, nothing in the cluster home but the
// configs, the binary, cluster.json and the public certificates is open to
// group or others (files 0600, directories 0700 or 0711), and the configs
// hold none of the keys. A home an older release left 0755/0644 is
// narrowed at the next `up`, each daemon warning in its log (data_dir_perm,
// meta_dir), and the data reads back. As root, `cat` run as nobody is
// refused a block file, an edit log segment, a task log and a daemon log.
func TestHomePrivateAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("real-binary cluster skipped in -short mode")
	}
	defer syscall.Umask(syscall.Umask(0o022))
	base := reachableTempDir(t)
	home := filepath.Join(base, "home")
	t.Setenv("SMARTH_HOME", home)
	t.Setenv("SMARTH_TOKEN_FILE", "")
	t.Setenv("SMARTH_TLS_CA_FILE", "")
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	opts := cluster.Options{
		Home: home, Binary: testcluster.Binary(t), DataNodes: 2, TLS: true, NodeManagers: true,
		NameNodeRPC: "127.0.0.1:0", NameNodeHTTP: "127.0.0.1:0", BlockSize: 1 << 20,
	}
	st, err := cluster.Up(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	sec, err := cluster.ClientSecurity(st.NameNode)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	runSecureJob(ctx, t, home, st, owner, sec) // a put of /secure-in/text and alice's wordcount
	owner.Close()
	// The node managers drop a finished job's work dir (its spills) at a
	// later heartbeat; what must be private is what stays.
	waitForDirs(t, "the node managers removed the finished job's work dirs", func() bool {
		for _, nm := range []string{"nm1", "nm2"} {
			ents, _ := os.ReadDir(filepath.Join(home, "data", nm))
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), "job_") {
					return false
				}
			}
		}
		return true
	})
	assertHomePrivate(t, home, "after a put and a job")
	assertConfigsHoldNoKeys(t, home)
	asNobodyRefused(t, home)

	// What an older release left: every directory under data/ and logs/
	// 0755, every file 0644.
	if _, err := cluster.Down(home, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"data", "logs", "run"} {
		widenTree(t, filepath.Join(home, d))
	}
	if err := os.Chmod(home, 0o755); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	opts.Out = &out
	st, err = cluster.Up(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	assertHomePrivate(t, home, "after `up` on a home left 0755/0644")
	for name, want := range map[string]string{
		"dn1.log":      `"key":"data_dir_perm","path":"` + filepath.Join(home, "data", "dn1", "current", "finalized", "blk_"),
		"namenode.log": `"key":"meta_dir","path":"` + filepath.Join(home, "data", "namenode", "edits_"),
	} {
		b, err := os.ReadFile(filepath.Join(home, "logs", name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) || !strings.Contains(string(b), `"old_mode":"0644","new_mode":"0600"`) {
			t.Errorf("logs/%s has no WARN %s... 0644 -> 0600:\n%s", name, want, b)
		}
	}
	if want := "path=" + filepath.Join(home, "logs"); !strings.Contains(out.String(), "level=WARN") || !strings.Contains(out.String(), want) {
		t.Errorf("`up` printed no WARN for %s:\n%s", want, out.String())
	}
	sec, err = cluster.ClientSecurity(st.NameNode)
	if err != nil {
		t.Fatal(err)
	}
	again, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	r, err := again.Open(ctx, "/secure-in/text")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(b) != strings.Repeat("to be or not to be\n", 1000) {
		t.Fatalf("/secure-in/text after the restart: %d bytes, %v", len(b), err)
	}
}

// public are the paths of a home other OS users may read: the configs
// (they name key files, hold none), the binary, the client's cluster.json
// and certificates (public by nature; the daemons' keys beside them are
// 0600).
func public(home string) func(string) bool {
	return func(p string) bool {
		rel, _ := filepath.Rel(home, p)
		switch {
		case rel == "conf", rel == "bin", rel == cluster.StateFile, strings.HasPrefix(rel, "."+cluster.StateFile+".tmp-"): // atomicfile's temporary
			return true
		case rel == "sockets": // short-circuit sockets, 0666 in 0755: no data, the block token decides
			return true
		case filepath.Dir(rel) == "tls" && strings.HasSuffix(rel, ".pem"):
			return true
		}
		return false
	}
}

func assertHomePrivate(t *testing.T, home, when string) {
	t.Helper()
	open, err := diskperm.Exposed(home, public(home))
	if err != nil {
		t.Fatal(err)
	}
	if len(open) > 0 {
		t.Errorf("%s, other OS users can read, write or list:\n%s", when, strings.Join(open, "\n"))
	}
}

// assertConfigsHoldNoKeys: no config, nor cluster.json, holds the bytes of
// a key or token file; they may stay readable.
func assertConfigsHoldNoKeys(t *testing.T, home string) {
	t.Helper()
	var secrets []string
	for _, glob := range []string{"keys/*", "tls/*.key", "tokens/*"} {
		m, _ := filepath.Glob(filepath.Join(home, glob))
		for _, f := range m {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if s := strings.TrimSpace(string(b)); len(s) >= 16 {
				secrets = append(secrets, s)
			}
		}
	}
	if len(secrets) < 4 {
		t.Fatalf("found %d key and token files to look for; want the identity secret, datanode key, service token, CA key...", len(secrets))
	}
	confs, _ := filepath.Glob(filepath.Join(home, "conf", "*"))
	for _, f := range append(confs, filepath.Join(home, cluster.StateFile)) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s, readable by others, holds a secret (%.8s...)", f, s)
			}
		}
	}
}

// asNobodyRefused runs `cat` as nobody on a block file, an edit log
// segment, a task log and a daemon log, and demands EACCES. It needs root
// to switch users: under CI=true it fails without, else it skips.
func asNobodyRefused(t *testing.T, home string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("reading as another OS user needs root (CI runs as root)")
		}
		t.Log("not root: skipping the read as nobody")
		return
	}
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("user nobody: %v", err)
	}
	uid, _ := strconv.Atoi(nobody.Uid)
	gid, _ := strconv.Atoi(nobody.Gid)
	first := func(glob string) string {
		t.Helper()
		m, _ := filepath.Glob(filepath.Join(home, glob))
		for _, f := range m {
			if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && !strings.HasSuffix(f, ".meta") {
				return f
			}
		}
		t.Fatalf("no file matches %s", glob)
		return ""
	}
	for _, f := range []string{
		first("data/dn*/current/finalized/blk_*"),
		first("data/namenode/edits_*"),
		first("data/nm*/userlogs/job_*/*/stderr"),
		first("logs/namenode.log"),
	} {
		var stderr bytes.Buffer
		cmd := exec.Command("cat", f)
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(stderr.String(), "Permission denied") {
			t.Errorf("cat %s as nobody: %v %q; want EACCES (Permission denied)", f, err, stderr.String())
		}
	}
	// The client config stays readable to them, and their token file is
	// reachable by name.
	cmd := exec.Command("cat", filepath.Join(home, cluster.StateFile))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("cat %s as nobody: %v %s; clients of other users need it", cluster.StateFile, err, out)
	}
}

func widenTree(t *testing.T, root string) {
	t.Helper()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// waitForDirs polls cond until it holds, failing after a minute with what
// it waited for.
func waitForDirs(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
