package webhdfs_test

import (
	"context"
	"io/fs"
	"testing"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// TestPermissionUmask: as Hadoop 3.4's WebHDFS, MKDIRS and CREATE take
// their permission parameter as the final mode: the client masked it, and
// HDFS's namenode (MKDIRS) and datanode (CREATE: DatanodeHttpServer's
// confForCreate sets umask 000) do not apply a umask again; permission=722
// gives 722 (it gave 700). The native client's mkdir and create get the
// cluster's umask, as DFSClient applies its own. A bad
// unmaskedpermission is refused like a bad permission.
func TestPermissionUmask(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	su := "user.name=" + osUser(t)
	mode := func(p string) fs.FileMode {
		t.Helper()
		st, err := admin.Stat(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode.Perm()
	}
	// The cluster's umask is 022: the native client's mkdir shows it.
	if err := admin.Mkdir(ctx, "/native", 0o777, false); err != nil {
		t.Fatal(err)
	}
	if m := mode("/native"); m != 0o755 {
		t.Fatalf("native mkdir 777 gave %o; the test expects umask 022", m)
	}
	for _, tc := range []struct {
		path string
		args []string
		want fs.FileMode
	}{
		{"/d777", []string{"permission=777", "unmaskedpermission=777"}, 0o777},
		{"/d775", []string{"permission=775"}, 0o775},
		{"/d722", []string{"permission=722", "unmaskedpermission=722"}, 0o722},
		{"/ddef", nil, 0o755},
	} {
		if r := w.op("PUT", tc.path, "MKDIRS", append([]string{su}, tc.args...)...); r.code != 200 {
			t.Fatalf("MKDIRS %s: %d %s", tc.path, r.code, r.body)
		}
		if m := mode(tc.path); m != tc.want {
			t.Fatalf("MKDIRS %s %v: mode %o, want %o", tc.path, tc.args, m, tc.want)
		}
	}
	for _, tc := range []struct {
		path string
		args []string
		want fs.FileMode
	}{
		{"/f722", []string{"permission=722", "unmaskedpermission=722"}, 0o722},
		{"/f666", []string{"permission=666"}, 0o666},
		{"/f000", []string{"permission=000"}, 0},
		{"/fdef", nil, 0o644},
	} {
		if r := w.twoStep("PUT", tc.path, "CREATE", []byte("x"), append([]string{su}, tc.args...)...); r.code != 201 {
			t.Fatalf("CREATE %s: %d %s", tc.path, r.code, r.body)
		}
		if m := mode(tc.path); m != tc.want {
			t.Fatalf("CREATE %s %v: mode %o, want %o", tc.path, tc.args, m, tc.want)
		}
	}
	// The native client's create still gets the umask.
	fw, err := admin.Create(ctx, "/native-f", client.CreateOptions{Perm: 0o666})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	if m := mode("/native-f"); m != 0o644 {
		t.Fatalf("native create 666 gave %o, want 644 (umask 022)", m)
	}
	w.op("PUT", "/bad", "MKDIRS", su, "unmaskedpermission=9").remote(t, 400, "IllegalArgumentException")
	w.twoStep("PUT", "/bad", "CREATE", []byte("x"), su, "unmaskedpermission=77777").remote(t, 400, "IllegalArgumentException")
}
