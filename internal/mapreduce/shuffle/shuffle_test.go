package shuffle

import (
	"context"
	"io"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"smarth/internal/mapreduce"
)

func TestServeAndFetch(t *testing.T) {
	p := filepath.Join(t.TempDir(), "file.out")
	os.WriteFile(p, []byte("aaaabbbbbbcc"), 0o644)
	out := &mapreduce.MapOutput{Path: p, Index: []mapreduce.SegmentIndex{{Offset: 0, Length: 4, Records: 1}, {Offset: 4, Length: 6, Records: 1}, {Offset: 10, Length: 2, Records: 1}}}
	srv := httptest.NewServer(Handler(func(job, attempt string) (*mapreduce.MapOutput, bool) {
		return out, job == "j1" && attempt == "a1"
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	f := &Fetcher{JobID: "j1", Client: NewClient()}
	for r, want := range []string{"aaaa", "bbbbbb", "cc"} {
		rc, n, err := f.Fetch(context.Background(), mapreduce.MapOutputRef{Attempt: "a1", Addr: addr}, r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != want || n != int64(len(want)) {
			t.Errorf("partition %d = %q (%d), want %q", r, b, n, want)
		}
	}
	// The same output held in memory is served the same.
	out.Data, out.Path = []byte("aaaabbbbbbcc"), ""
	for r, want := range []string{"aaaa", "bbbbbb", "cc"} {
		rc, n, err := f.Fetch(context.Background(), mapreduce.MapOutputRef{Attempt: "a1", Addr: addr}, r)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != want || n != int64(len(want)) {
			t.Errorf("in-memory partition %d = %q (%d), want %q", r, b, n, want)
		}
	}
	if _, _, err := f.Fetch(context.Background(), mapreduce.MapOutputRef{Attempt: "zz", Addr: addr}, 0); err == nil {
		t.Error("fetch of an unknown attempt succeeded")
	}
	if _, _, err := f.Fetch(context.Background(), mapreduce.MapOutputRef{Attempt: "a1", Addr: addr}, 3); err == nil {
		t.Error("fetch of a missing partition succeeded")
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add("job=j1&attempt=a&reduce=3")
	f.Add("reduce=-1")
	f.Add("%zz")
	f.Fuzz(func(t *testing.T, q string) {
		v, err := url.ParseQuery(q)
		if err != nil {
			return
		}
		r, err := ParseRequest(v)
		if err == nil && (r.JobID == "" || r.Attempt == "" || r.Reduce < 0) {
			t.Fatalf("accepted bad request %+v", r)
		}
	})
}
