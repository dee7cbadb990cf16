package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/pki"
	"smarth/internal/testbed"
	"smarth/internal/testenv"
)

// deployTopology is four emulated hosts, each its own network namespace
// and address: the doc's nn1, rm1, and two worker hosts, each with a
// datanode and a node manager. The testbed builds the network only; the
// daemons are started here, as docs/deployment.md says.
const deployTopology = `
name: %s
description: docs/deployment.md on emulated hosts
defaults: {nic: 1gbit}
racks:
  - {name: rack1}
hosts:
  - {name: nn1, rack: rack1, roles: [namenode, client]}
  - {name: rm1, rack: rack1, roles: [resourcemanager]}
  - {name: dn1, rack: rack1, roles: [datanode, nodemanager]}
  - {name: dn2, rack: rack1, roles: [datanode, nodemanager]}
`

// TestDeploymentDocOnTestbed follows docs/deployment.md's first start on
// a testbed, with no `cluster up`: every daemon from its own config (the
// doc's example, with the testbed's addresses and a per-host root for
// /etc/smarth and /var/lib/smarth) on its own emulated host, in the doc's
// order: the namenode first, whose secrets then appear 0600 in meta_dir;
// the datanode key and identity secret copied to the hosts that need
// them; a service token from `smarth login`; the datanodes, the resource
// manager, the node managers; then a put, a wordcount job and a get from
// a client, all over TLS with a CA and a certificate per host.
func TestDeploymentDocOnTestbed(t *testing.T) {
	if testing.Short() {
		t.Skip("a multi-process cluster on network namespaces: skipped in -short mode")
	}
	testenv.NeedRoot(t, "create network namespaces for the emulated hosts")
	testenv.NeedTools(t, "ip", "tc")
	probe := fmt.Sprintf("smarth.deploy-probe-%d.x", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		testenv.Missing(t, "this machine cannot create network namespaces: %v: %s", err, bytes.TrimSpace(out))
	}
	exec.Command("ip", "netns", "del", probe).Run()
	confs := docConfigs(t)

	bin := filepath.Join(t.TempDir(), "smarth")
	if out, err := exec.Command("go", "build", "-o", bin, "smarth/cmd/smarth").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	name := fmt.Sprintf("itest-deploy-%d", os.Getpid())
	topoFile := filepath.Join(t.TempDir(), "deploy.yaml")
	if err := os.WriteFile(topoFile, []byte(fmt.Sprintf(deployTopology, name)), 0o644); err != nil {
		t.Fatal(err)
	}
	var tbLog bytes.Buffer
	m, err := testbed.New(testbed.Options{StateRoot: t.TempDir(), WorkRoot: t.TempDir(), Tool: bin, Out: &tbLog})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := m.Up(ctx, topoFile, testbed.UpOptions{NoDaemons: true})
	if err != nil {
		t.Fatalf("testbed up: %v\n%s", err, tbLog.String())
	}
	type daemon struct {
		p      *os.Process
		exited chan error
	}
	var daemons []daemon
	t.Cleanup(func() {
		// Stop the daemons as the doc says (SIGTERM, node managers first)
		// before their namespaces go.
		for i := len(daemons) - 1; i >= 0; i-- {
			daemons[i].p.Signal(syscall.SIGTERM)
			select {
			case <-daemons[i].exited:
			case <-time.After(20 * time.Second):
				daemons[i].p.Kill()
				<-daemons[i].exited
			}
		}
		m.Down(context.Background(), name)
		if t.Failed() {
			t.Logf("testbed log:\n%s", tbLog.String())
		}
	})
	ip := map[string]string{}
	for _, h := range s.Topology.Hosts {
		ip[h.Name] = h.Addr.String()
	}
	root := func(host string) string { return filepath.Join(s.WorkDir, host) }
	// at is a layout path of the doc on host.
	at := func(host, p string) string { return filepath.Join(root(host), p) }
	// confFor rewrites the doc's config of role for host: its addresses
	// and names to the testbed's, its layout paths under the host's root.
	confFor := func(role, host string) string {
		c := confs[role]
		if host != "" {
			c = strings.ReplaceAll(c, "dn1", host)
		}
		r := strings.NewReplacer("nn1.example.com", ip["nn1"], "rm1.example.com", ip["rm1"],
			"10.0.0.10", ip["nn1"], "10.0.0.11", ip["rm1"], "10.0.0.21", ip[host],
			"/etc/smarth/", root(host)+"/etc/smarth/", "/var/lib/smarth/", root(host)+"/var/lib/smarth/")
		if host == "" {
			return c
		}
		return r.Replace(c)
	}
	run := func(host string, env []string, argv ...string) string {
		t.Helper()
		c, err := m.Command(ctx, s, host, argv)
		if err != nil {
			t.Fatal(err)
		}
		c.Env = append(c.Env, env...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("on %s: %s: %v\n%s", host, strings.Join(argv, " "), err, out)
		}
		return string(out)
	}
	// start runs `smarth ROLE --config /etc/smarth/ROLE.yaml --log-file
	// /var/log/smarth/ROLE.log` on host, as the systemd unit does, and
	// waits for its ready file (the test's only addition).
	start := func(role, host string) {
		t.Helper()
		conf := at(host, "/etc/smarth/"+role+".yaml")
		if err := os.WriteFile(conf, []byte(confFor(role, host)), 0o644); err != nil {
			t.Fatal(err)
		}
		ready := at(host, "/run/"+role+".ready")
		c, err := m.Command(ctx, s, host, []string{bin, role, "--config", conf,
			"--log-file", at(host, "/var/log/smarth/"+role+".log"), "--ready-file", ready})
		if err != nil {
			t.Fatal(err)
		}
		// Only its config tells a daemon where the others and its
		// credentials are: drop the testbed's client variables.
		c.Env = slices.DeleteFunc(c.Env, func(kv string) bool {
			return strings.HasPrefix(kv, "SMARTH_NAMENODE=") || strings.HasPrefix(kv, "SMARTH_RESOURCEMANAGER=") || strings.HasPrefix(kv, "SMARTH_TOKEN_FILE=")
		})
		var out bytes.Buffer
		c.Stdout, c.Stderr = &out, &out
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- c.Wait() }()
		daemons = append(daemons, daemon{c.Process, exited})
		deadline := time.Now().Add(90 * time.Second)
		for {
			if _, err := os.Stat(ready); err == nil {
				return
			}
			select {
			case err := <-exited:
				exited <- err // for the cleanup
				log, _ := os.ReadFile(at(host, "/var/log/smarth/"+role+".log"))
				t.Fatalf("%s on %s exited before ready: %v\n%s\n%s", role, host, err, out.String(), log)
			case <-time.After(100 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s on %s: no ready file %s after 90s", role, host, ready)
			}
		}
	}
	copyFile := func(src, dst string) {
		t.Helper()
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatalf("copy %s: %v", src, err)
		}
		if err := os.WriteFile(dst, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}

	// Install layout on every host, and TLS: a CA, a certificate per host.
	makeTLS := docTLS(t)
	for host := range ip {
		for _, d := range []string{"/etc/smarth/keys", "/etc/smarth/tls", "/var/log/smarth", "/run",
			"/var/lib/smarth/namenode", "/var/lib/smarth/datanode", "/var/lib/smarth/resourcemanager", "/var/lib/smarth/nodemanager"} {
			if err := os.MkdirAll(at(host, d), 0o700); err != nil {
				t.Fatal(err)
			}
		}
		makeTLS(host, ip[host], at(host, "/etc/smarth/tls"))
	}

	// 1. The namenode, whose first start makes the cluster's secrets.
	start("namenode", "nn1")
	meta := at("nn1", "/var/lib/smarth/namenode")
	for _, k := range []string{"auth.key", "datanode.key"} {
		fi, err := os.Stat(filepath.Join(meta, k))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("after the namenode's first start, %s/%s: %v (mode %v), want a 0600 file", meta, k, err, fi)
		}
	}
	// 2. Secrets to the hosts that need them.
	for _, h := range []string{"dn1", "dn2"} {
		copyFile(filepath.Join(meta, "datanode.key"), at(h, "/etc/smarth/keys/datanode.key"))
	}
	copyFile(filepath.Join(meta, "auth.key"), at("rm1", "/etc/smarth/keys/auth.key"))
	// 3. The service token. The daemons run as root here, so root (the
	// namenode's OS user) is the superuser the doc's `smarth` user is.
	token := at("nn1", "/etc/smarth/keys/smarth.token")
	run("nn1", nil, bin, "login", "--secret-file", filepath.Join(meta, "auth.key"), "--user", "root", "--token-file", token)
	for _, h := range []string{"rm1", "dn1", "dn2"} {
		copyFile(token, at(h, "/etc/smarth/keys/smarth.token"))
	}
	// 4-6. Datanodes, the resource manager, node managers.
	start("datanode", "dn1")
	start("datanode", "dn2")
	start("resourcemanager", "rm1")
	start("nodemanager", "dn1")
	start("nodemanager", "dn2")

	// A client on nn1, with the doc's client environment.
	env := []string{"SMARTH_NAMENODE=" + ip["nn1"] + ":8020", "SMARTH_RESOURCEMANAGER=" + ip["rm1"] + ":8032",
		"SMARTH_TLS_CA_FILE=" + at("nn1", "/etc/smarth/tls/ca.pem"), "SMARTH_TOKEN_FILE=" + token}
	words := at("nn1", "words.txt")
	if err := os.WriteFile(words, []byte(strings.Repeat("to be or not to be\n", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	run("nn1", env, bin, "fs", "mkdir", "-p", "/user/root/in")
	run("nn1", env, bin, "fs", "put", words, "/user/root/in/words.txt")
	run("nn1", env, bin, "job", "run", "wordcount", "--input", "/user/root/in", "--output", "/user/root/wc")
	counts := at("nn1", "counts.txt")
	run("nn1", env, bin, "fs", "get", "/user/root/wc/part-r-00000", counts)
	got, err := os.ReadFile(counts)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"be\t2000", "to\t2000", "or\t1000", "not\t1000"} {
		if !strings.Contains(string(got), want+"\n") {
			t.Errorf("wordcount's output lacks %q:\n%s", want, got)
		}
	}
	// Every daemon ran on its own host: the namenode saw two datanodes
	// from their own addresses.
	report := run("nn1", env, bin, "admin", "report")
	for _, h := range []string{"dn1", "dn2"} {
		if !strings.Contains(report, ip[h]) {
			t.Errorf("admin report does not list %s's datanode at %s:\n%s", h, ip[h], report)
		}
	}
}

// docTLS returns what makes a host's TLS files (ca.pem, HOST.pem,
// HOST.key in dir): the doc's openssl commands, the CA part run once and
// the per-host part for each host with its name and address, where
// openssl is installed; else internal/pki's CA, which makes the same
// kind of files (ECDSA P-256, both key usages).
func docTLS(t *testing.T) func(host, ip, dir string) {
	t.Helper()
	caDir := t.TempDir()
	copyTo := func(dir string, files map[string]string) {
		for src, dst := range files {
			b, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, dst), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Log("no openssl: certificates from internal/pki instead of the doc's openssl commands")
		ca, err := pki.LoadOrCreateCA(caDir, "smarth cluster CA")
		if err != nil {
			t.Fatal(err)
		}
		return func(host, ip, dir string) {
			if _, _, err := ca.Issue(dir, host, []string{ip, host + ".example.com"}); err != nil {
				t.Fatal(err)
			}
			copyTo(dir, map[string]string{filepath.Join(caDir, "ca.pem"): "ca.pem"})
		}
	}
	var script []string
	for _, b := range docBlocks(t, deploymentDoc) {
		if b.lang == "sh" && strings.Contains(strings.Join(b.lines, "\n"), "openssl req -x509") {
			script = b.lines
		}
	}
	split := slices.IndexFunc(script, func(l string) bool { return strings.HasPrefix(l, "# per host") })
	if split < 0 {
		t.Fatalf("%s: no openssl block with a `# per host` part", deploymentDoc)
	}
	sh := func(dir, text string) {
		c := exec.Command("bash", "-e", "-c", text)
		c.Dir = dir
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("the doc's openssl commands in %s:\n%s\n%v\n%s", dir, text, err, out)
		}
	}
	sh(caDir, strings.Join(script[:split], "\n"))
	return func(host, ip, dir string) {
		sh(caDir, strings.NewReplacer("dn1", host, "10.0.0.21", ip).Replace(strings.Join(script[split:], "\n")))
		copyTo(dir, map[string]string{filepath.Join(caDir, "ca.pem"): "ca.pem",
			filepath.Join(caDir, host+".pem"): host + ".pem", filepath.Join(caDir, host+".key"): host + ".key"})
	}
}
