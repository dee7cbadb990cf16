package webhdfs_test

import (
	"context"
	"io/fs"
	"testing"

	"smarth/internal/testcluster"
)

// TestPermissionUmask: as Hadoop 3.4's WebHDFS, MKDIRS takes its
// permission parameter as the final mode (the client masked it; the
// namenode's umask does not apply again), while CREATE's permission gets
// the umask as HDFS's datanode-side DFSClient gives it. A bad
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
		{"/ddef", nil, 0o755},
	} {
		if r := w.op("PUT", tc.path, "MKDIRS", append([]string{su}, tc.args...)...); r.code != 200 {
			t.Fatalf("MKDIRS %s: %d %s", tc.path, r.code, r.body)
		}
		if m := mode(tc.path); m != tc.want {
			t.Fatalf("MKDIRS %s %v: mode %o, want %o", tc.path, tc.args, m, tc.want)
		}
	}
	if r := w.twoStep("PUT", "/f666", "CREATE", []byte("x"), su, "permission=666"); r.code != 201 {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	if m := mode("/f666"); m != 0o644 {
		t.Fatalf("CREATE permission=666: mode %o, want 644 (umask 022)", m)
	}
	w.op("PUT", "/bad", "MKDIRS", su, "unmaskedpermission=9").remote(t, 400, "IllegalArgumentException")
	w.twoStep("PUT", "/bad", "CREATE", []byte("x"), su, "unmaskedpermission=77777").remote(t, 400, "IllegalArgumentException")
}
