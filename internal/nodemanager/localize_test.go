package nodemanager

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
)

func zipOf(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for name, body := range files {
		f, err := w.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(body))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tgzOf(t *testing.T, entries []tar.Header, bodies map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	gz := gzip.NewWriter(&b)
	w := tar.NewWriter(gz)
	for _, h := range entries {
		body := bodies[h.Name]
		h.Size = int64(len(body))
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := w.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	w.Close()
	gz.Close()
	return b.Bytes()
}

// The job's shipped files land once in the job's directory: a file under
// its link name (executable), archives unpacked; a container then finds
// them all in its work directory.
func TestLocalizeFilesAndArchives(t *testing.T) {
	root := t.TempDir()
	dfs, err := mapreduce.NewLocalFS(filepath.Join(root, "dfs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	put := func(p string, b []byte) {
		w, err := dfs.Create(ctx, p, mapreduce.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	put("/st/mapper.py", []byte("print('hi')\n"))
	put("/st/libs.zip", zipOf(t, map[string]string{"wc/__init__.py": "X = 1\n", "top.txt": "top"}))
	put("/st/more.tgz", tgzOf(t, []tar.Header{{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755}, {Name: "d/run.sh", Typeflag: tar.TypeReg, Mode: 0o755}},
		map[string]string{"d/run.sh": "echo ok\n"}))
	items, err := mapreduce.ShippedOf(map[string]string{
		mapreduce.ParamCacheFiles:    "/st/mapper.py",
		mapreduce.ParamCacheArchives: "/st/libs.zip#libs,/st/more.tgz",
	})
	if err != nil {
		t.Fatal(err)
	}
	var c shippedCache
	jobDir := filepath.Join(root, "job_1")
	os.Mkdir(jobDir, 0o700)
	src, err := c.fetch(ctx, "job_1", jobDir, dfs, items)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "container")
	os.Mkdir(work, 0o700)
	if err := linkShipped(src, work, items, -1, -1); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"mapper.py": "print('hi')\n", "libs/wc/__init__.py": "X = 1\n", "libs/top.txt": "top", "more.tgz/d/run.sh": "echo ok\n"} {
		b, err := os.ReadFile(filepath.Join(work, p))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", p, b, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(work, "mapper.py")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("mapper.py is not executable: %v %v", st, err)
	}
	if st, err := os.Stat(filepath.Join(work, "more.tgz/d/run.sh")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("an executable archive entry lost its x bit: %v %v", st, err)
	}
	// Once per job: a second attempt gets the same directory without a
	// second download (the DFS copy removed meanwhile).
	dfs.Delete(ctx, "/st", true)
	if again, err := c.fetch(ctx, "job_1", jobDir, dfs, items); err != nil || again != src {
		t.Errorf("second fetch: %q, %v; want the first's %q", again, err, src)
	}
	c.forget("job_1")
	if _, err := c.fetch(ctx, "job_1", jobDir, dfs, items); err == nil {
		t.Error("a forgotten job's files were not fetched again")
	}
}

// An archive is data: an entry that would land outside its directory, a
// symlink, or one over the node's budget is refused, and nothing is left
// outside the job's directory.
func TestLocalizeRefusesHostileArchives(t *testing.T) {
	for _, tc := range []struct {
		name    string
		archive func(t *testing.T) []byte
		file    string
		want    string
	}{
		{"zip slip", func(t *testing.T) []byte { return zipOf(t, map[string]string{"../../escaped": "x"}) }, "a.zip", "leaves the archive's directory"},
		{"absolute tar", func(t *testing.T) []byte {
			return tgzOf(t, []tar.Header{{Name: "/tmp/escaped", Typeflag: tar.TypeReg, Mode: 0o644}}, map[string]string{"/tmp/escaped": "x"})
		}, "a.tgz", "leaves the archive's directory"},
		{"symlink", func(t *testing.T) []byte {
			return tgzOf(t, []tar.Header{{Name: "l", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd", Mode: 0o777}}, nil)
		}, "a.tgz", "not a file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dfs, err := mapreduce.NewLocalFS(filepath.Join(root, "dfs"))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			w, _ := dfs.Create(ctx, "/"+tc.file, mapreduce.CreateOptions{})
			w.Write(tc.archive(t))
			w.Close()
			items, err := mapreduce.ShippedOf(map[string]string{mapreduce.ParamCacheArchives: "/" + tc.file})
			if err != nil {
				t.Fatal(err)
			}
			jobDir := filepath.Join(root, "a", "b", "job")
			os.MkdirAll(jobDir, 0o700)
			var c shippedCache
			_, err = c.fetch(ctx, "job", jobDir, dfs, items)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
			for _, p := range []string{filepath.Join(root, "a", "escaped"), filepath.Join(root, "escaped"), filepath.Join(jobDir, "shipped")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s exists after a refused archive", p)
				}
			}
		})
	}
}

func TestWriteFileStopsAtTheBudget(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "f")
	n, err := writeFile(dst, strings.NewReader(strings.Repeat("x", 100)), 0o644, 10)
	if err == nil || !strings.Contains(err.Error(), "over the") || n > 11 {
		t.Errorf("writeFile of 100 bytes with a budget of 10: n=%d err=%v", n, err)
	}
}
