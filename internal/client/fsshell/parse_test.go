package fsshell

import (
	"io/fs"
	"testing"
)

func TestSplitURI(t *testing.T) {
	cases := []struct{ arg, addr, path string }{
		{"/a/b", "", "/a/b"},
		{"rel/x", "", "rel/x"},
		{"hdfs://nn1:9000/a", "nn1:9000", "/a"},
		{"smarth://10.0.0.1:8020/a/b", "10.0.0.1:8020", "/a/b"},
		{"hdfs://nn1/a", "nn1:8020", "/a"},
		{"HDFS://nn1:1", "nn1:1", "/"},
		{"hdfs:///a", "", "/a"},
		{"/odd/na://me", "", "/odd/na://me"},
	}
	for _, c := range cases {
		addr, p, err := SplitURI(c.arg)
		if err != nil || addr != c.addr || p != c.path {
			t.Errorf("SplitURI(%q) = %q %q %v, want %q %q", c.arg, addr, p, err, c.addr, c.path)
		}
	}
	if _, _, err := SplitURI("s3a://bucket/x"); err == nil {
		t.Error("s3a:// taken as a path")
	}
	if _, err := NameNodeOf([]string{"hdfs://a:1/x", "smarth://a:1/y", "/z"}); err != nil {
		t.Errorf("one namenode twice: %v", err)
	}
	if _, err := NameNodeOf([]string{"hdfs://a:1/x", "hdfs://b:1/y"}); err == nil {
		t.Error("two namenodes accepted")
	}
}

func TestParseMode(t *testing.T) {
	cases := []struct {
		spec string
		old  fs.FileMode
		dir  bool
		want fs.FileMode
	}{
		{"755", 0, false, 0o755},
		{"1777", 0, true, 0o777 | fs.ModeSticky},
		{"u+x", 0o644, false, 0o744},
		{"go-w", 0o777, false, 0o755},
		{"a=r", 0o777, false, 0o444},
		{"+x", 0o600, false, 0o711},
		{"a+X", 0o644, false, 0o644},
		{"a+X", 0o644, true, 0o755},
		{"a+X", 0o744, false, 0o755},
		{"u=rwx,go=", 0o755, true, 0o700},
		{"+t", 0o777, true, 0o777 | fs.ModeSticky},
		{"o-t", 0o777 | fs.ModeSticky, true, 0o777},
		{"u+r-w", 0o200, false, 0o400},
	}
	for _, c := range cases {
		ch, err := ParseMode(c.spec)
		if err != nil {
			t.Errorf("ParseMode(%q): %v", c.spec, err)
			continue
		}
		if got := ch(c.old, c.dir); got != c.want {
			t.Errorf("%s on %v (dir %v) = %v, want %v", c.spec, c.old, c.dir, got, c.want)
		}
	}
	for _, bad := range []string{"", "u", "u+q", "8", "17777", "x+r"} {
		if _, err := ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) accepted", bad)
		}
	}
	if PermString(0o755|fs.ModeSticky) != "rwxr-xr-t" || PermString(0o640|fs.ModeSticky) != "rw-r----T" {
		t.Error("sticky bit as HDFS prints it")
	}
	for spec, want := range map[string][2]string{"alice": {"alice", ""}, "alice:staff": {"alice", "staff"}, ":staff": {"", "staff"}, "bob.g": {"bob", "g"}} {
		o, g, err := ParseOwner(spec)
		if err != nil || o != want[0] || g != want[1] {
			t.Errorf("ParseOwner(%q) = %q %q %v", spec, o, g, err)
		}
	}
}
