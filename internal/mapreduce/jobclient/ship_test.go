package jobclient

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
)

func TestShipUploadsAndNames(t *testing.T) {
	root := t.TempDir()
	fsys, err := mapreduce.NewLocalFS(filepath.Join(root, "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(root, "local")
	os.Mkdir(local, 0o700)
	os.WriteFile(filepath.Join(local, "m.py"), []byte("print(1)"), 0o644)
	os.WriteFile(filepath.Join(local, "l.zip"), []byte("PK"), 0o644)
	ctx := context.Background()
	params, staging, err := Ship(ctx, fsys, "/user/a", []string{filepath.Join(local, "m.py") + ",hdfs://nn:8020/data/dict#d"},
		[]string{filepath.Join(local, "l.zip") + "#libs"})
	if err != nil {
		t.Fatal(err)
	}
	items, err := mapreduce.ShippedOf(params)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, it := range items {
		names[it.Name] = it.Path
		if it.Path != "/data/dict" && !strings.HasPrefix(it.Path, staging+"/") {
			t.Errorf("%s shipped to %s, outside the staging directory %s", it.Name, it.Path, staging)
		}
	}
	if names["d"] != "/data/dict" || names["m.py"] == "" || names["libs"] == "" {
		t.Errorf("shipped %v", names)
	}
	f, err := fsys.Open(ctx, names["m.py"])
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	n, _ := f.Read(b)
	f.Close()
	if string(b[:n]) != "print(1)" {
		t.Errorf("uploaded m.py holds %q", b[:n])
	}

	for _, tc := range []struct {
		files, archives []string
		want            string
	}{
		{[]string{filepath.Join(local, "nope.py")}, nil, "File file:" + filepath.Join(local, "nope.py") + " does not exist"},
		{[]string{local}, nil, "is a directory"},
		{nil, []string{filepath.Join(local, "m.py")}, "not an archive"},
		{[]string{filepath.Join(local, "m.py") + "#x", filepath.Join(local, "l.zip") + "#x"}, nil, "would both be"},
	} {
		if _, _, err := Ship(ctx, fsys, "/user/a", tc.files, tc.archives); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Ship(%v, %v): %v, want %q", tc.files, tc.archives, err, tc.want)
		}
	}
	// A refused set leaves no staging directory behind.
	if list, _ := fsys.List(ctx, "/user/a/.staging"); len(list) != 1 {
		t.Errorf("staging directories after refusals: %v", list)
	}
}
