package webhdfs_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/client"
	"smarth/internal/cluster"
	"smarth/internal/testcluster"
)

// TestHadoopJavaClientHA: Hadoop's own WebHDFS client (FsShell over
// swebhdfs://) against a local HA group, configured as an HDFS HA client
// is: a nameservice whose members are the three namenodes' HTTPS
// addresses (dfs.nameservices, dfs.ha.namenodes.<ns>,
// dfs.namenode.https-address.<ns>.<nn>, a failover proxy provider),
// trusting the cluster's CA.
//
//   - The active is listed last, so the client's first calls meet the
//     standbys, which answer StandbyException; the client must fail over
//     on it (WebHdfsFileSystem's failoverOnNetworkException policy). The
//     control: the same client given only the two standbys fails, so the
//     standbys refuse rather than serve or proxy.
//   - Then the active is SIGKILLed, and a new client process of the same
//     configuration (the dead member still listed) writes and reads
//     through the new active.
//
// Every file is then read back by the native client and compared.
func TestHadoopJavaClientHA(t *testing.T) {
	cp := javaClasspath(t)
	need(t, "keytool")
	bin := testcluster.Binary(t)
	home := t.TempDir()
	t.Cleanup(func() { _, _ = cluster.Down(home, 5*time.Second) })
	up := exec.Command(bin, "cluster", "up", "--home", home, "--namenodes", "3", "--datanodes", "3", "--nodemanagers=false",
		"--auth", "simple", "--namenode-addr", "127.0.0.1:0", "--namenode-http", "127.0.0.1:0", "--block-size", "1MiB", "--timeout", "2m")
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("cluster up: %v\n%s", err, out)
	}
	st, err := cluster.LoadState(home)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, active, err := cluster.ActiveNameNode(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	var standbys, order []string // member ids; order: standbys, then the active
	web := map[string]string{}   // each member's HTTPS address
	for _, d := range st.NameNodeDaemons() {
		web[d.Name] = d.Ready.HTTP
		if d.Name != active.Name {
			standbys = append(standbys, d.Name)
		}
	}
	if len(standbys) != 2 {
		t.Fatalf("namenodes %v with %s active; want two standbys", web, active.Name)
	}
	order = append(append(order, standbys...), active.Name)

	store := filepath.Join(t.TempDir(), "trust.p12")
	if out, err := exec.Command("keytool", "-importcert", "-noprompt", "-alias", "smarth-ca", "-file", cluster.CAFile(home),
		"-keystore", store, "-storetype", "PKCS12", "-storepass", "changeit").CombinedOutput(); err != nil {
		t.Fatalf("keytool: %v\n%s", err, out)
	}
	const ns = "smarthns"
	env := func(members []string) javaEnv {
		props := map[string]string{
			"dfs.nameservices":       ns,
			"dfs.ha.namenodes." + ns: strings.Join(members, ","),
			// What makes the URI's host a nameservice to
			// WebHdfsFileSystem (HAUtilClient.isClientFailoverConfigured),
			// as every HDFS HA client configures it.
			"dfs.client.failover.proxy.provider." + ns: "org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider",
			"dfs.replication":                          "2",
			"dfs.blocksize":                            "1048576",
			"fs.permissions.umask-mode":                "022",
			// Hadoop's default verifier reads only DNS names from a
			// certificate; the cluster's name 127.0.0.1 by IP. The chain
			// is still checked against the cluster's CA.
			"hadoop.ssl.hostname.verifier": "DEFAULT_AND_LOCALHOST",
			// Short waits between failovers: an election takes about a
			// second, and the control's failures end sooner.
			"dfs.http.client.failover.sleep.base.millis": "200",
			"dfs.http.client.failover.sleep.max.millis":  "1000",
		}
		for _, m := range members {
			props["dfs.namenode.https-address."+ns+"."+m] = web[m]
		}
		return javaEnv{props: props, jvm: []string{"-Djavax.net.ssl.trustStore=" + store,
			"-Djavax.net.ssl.trustStorePassword=changeit", "-Djavax.net.ssl.trustStoreType=PKCS12"}}
	}
	base := "swebhdfs://" + ns
	dir := t.TempDir()
	local := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte(name+" written by hadoop fs through an HA group\n"), n), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := local("a", 40000), local("b", 30000) // more than a block each

	// The control: the standbys alone refuse everything.
	ctl := env(standbys)
	ctl.props["dfs.http.client.failover.max.attempts"] = "2"
	outs, codes := hadoopFsWith(t, cp, ctl, []string{"-ls", base + "/"})
	if codes[0] == 0 || !strings.Contains(outs[0], "is not supported in state standby") {
		t.Fatalf("control: hadoop fs -ls through the two standbys alone: rc %d; want a failure with the StandbyException's message\n%s", codes[0], outs[0])
	}

	outs, codes = hadoopFsWith(t, cp, env(order),
		[]string{"-mkdir", "-p", base + "/ha"},
		[]string{"-put", a, base + "/ha/a"},
		[]string{"-ls", base + "/ha"})
	for i, rc := range codes {
		if rc != 0 {
			t.Fatalf("hadoop fs line %d through the nameservice (%s active, listed last): rc %d\n%s", i, active.Name, rc, outs[i])
		}
	}
	if !strings.Contains(outs[2], base+"/ha/a") {
		t.Fatalf("hadoop fs -ls: no %s/ha/a in\n%s", base, outs[2])
	}

	victim, _ := st.Daemon(active.Name)
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	outs, codes = hadoopFsWith(t, cp, env(order),
		[]string{"-put", b, base + "/ha/b"},
		[]string{"-cat", base + "/ha/a"})
	for i, rc := range codes {
		if rc != 0 {
			t.Fatalf("hadoop fs line %d after SIGKILL of the active %s: rc %d\n%s", i, active.Name, rc, outs[i])
		}
	}
	want, _ := os.ReadFile(a)
	if !strings.Contains(outs[1], string(want)) {
		t.Fatalf("hadoop fs -cat after the failover: %d bytes, not the %d put before it", len(outs[1]), len(want))
	}
	_, now, err := cluster.ActiveNameNode(ctx, st)
	if err != nil || now.Name == active.Name {
		t.Fatalf("after the kill the active is %q (%v); want another member", now.Name, err)
	}

	sec, err := st.Security()
	if err != nil {
		t.Fatal(err)
	}
	fs, err := client.New(client.Config{NameNode: st.NameNode, TokenFile: sec.TokenFile, TLS: sec.TLS})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	for name, p := range map[string]string{"/ha/a": a, "/ha/b": b} {
		want, _ := os.ReadFile(p)
		r, err := fs.Open(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(r)
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s as the native client reads it: %d bytes (%v); want the %d Hadoop's client put", name, len(got), err, len(want))
		}
	}
}
