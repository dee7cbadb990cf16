package shuffle

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
)

// served starts a shuffle server for map attempt a1 of job j1 whose
// output is the three segments "aaaa", "bbbbbb", "cc".
func served(t *testing.T, secret []byte) (*mapreduce.MapOutput, string) {
	t.Helper()
	data := []byte("aaaabbbbbbcc")
	p := filepath.Join(t.TempDir(), "file.out")
	os.WriteFile(p, data, 0o644)
	out := &mapreduce.MapOutput{Path: p}
	for _, s := range [][2]int64{{0, 4}, {4, 6}, {10, 2}} {
		out.Index = append(out.Index, mapreduce.SegmentIndex{Offset: s[0], Length: s[1], Records: 1,
			CRC: mapreduce.SegmentCRC(data[s[0] : s[0]+s[1]])})
	}
	srv := httptest.NewServer(Handler(func(job, attempt string) (*mapreduce.MapOutput, bool) {
		return out, job == "j1" && attempt == "a1"
	}, func(job string) ([]byte, bool) { return secret, job == "j1" }))
	t.Cleanup(srv.Close)
	return out, srv.Listener.Addr().String()
}

// fetchAll reads a fetched segment to its end and checks its checksum.
func fetchAll(f *Fetcher, addr, attempt string, reduce int) (string, int64, error) {
	rc, n, err := f.Fetch(context.Background(), mapreduce.MapOutputRef{Attempt: attempt, Addr: addr}, reduce)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return "", 0, err
	}
	if v, ok := rc.(interface{ Verify() error }); !ok {
		return "", 0, errors.New("fetched segment cannot be verified")
	} else if err := v.Verify(); err != nil {
		return string(b), n, err
	}
	return string(b), n, nil
}

func TestServeAndFetch(t *testing.T) {
	secret, _ := NewSecret()
	out, addr := served(t, secret)
	f := &Fetcher{JobID: "j1", Secret: secret, Client: NewClient(nil)}
	for r, want := range []string{"aaaa", "bbbbbb", "cc"} {
		b, n, err := fetchAll(f, addr, "a1", r)
		if err != nil || b != want || n != int64(len(want)) {
			t.Errorf("partition %d = %q (%d), %v; want %q", r, b, n, err, want)
		}
	}
	// The same output held in memory is served the same.
	out.Data, out.Path = []byte("aaaabbbbbbcc"), ""
	for r, want := range []string{"aaaa", "bbbbbb", "cc"} {
		b, n, err := fetchAll(f, addr, "a1", r)
		if err != nil || b != want || n != int64(len(want)) {
			t.Errorf("in-memory partition %d = %q (%d), %v; want %q", r, b, n, err, want)
		}
	}
	if _, _, err := fetchAll(f, addr, "zz", 0); err == nil {
		t.Error("fetch of an unknown attempt succeeded")
	}
	if _, _, err := fetchAll(f, addr, "a1", 3); err == nil {
		t.Error("fetch of a missing partition succeeded")
	}
}

// TestFetchWithoutTheJobSecretIsRefused: a request without a signature,
// with one made under another key, or signed for another partition gets
// 401 and no byte of map output; the signed request is the control.
func TestFetchWithoutTheJobSecretIsRefused(t *testing.T) {
	secret, _ := NewSecret()
	_, addr := served(t, secret)
	get := func(reduce string, sig string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+Path+"?job=j1&attempt=a1&reduce="+reduce, nil)
		if sig != "" {
			req.Header.Set(HashHeader, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	other, _ := NewSecret()
	for name, sig := range map[string]string{
		"no signature":      "",
		"another key":       Request{JobID: "j1", Attempt: "a1", Reduce: 0}.Sign(other),
		"another partition": Request{JobID: "j1", Attempt: "a1", Reduce: 1}.Sign(secret),
		"garbage":           "AAAA",
	} {
		code, body := get("0", sig)
		if code != http.StatusUnauthorized || strings.Contains(body, "aaaa") {
			t.Errorf("%s: %d %q; want 401 and no map output", name, code, body)
		}
	}
	if code, body := get("0", Request{JobID: "j1", Attempt: "a1", Reduce: 0}.Sign(secret)); code != http.StatusOK || body != "aaaa" {
		t.Fatalf("control, signed request: %d %q", code, body)
	}
	// A fetcher with the wrong secret fails too, and says why.
	f := &Fetcher{JobID: "j1", Secret: other, Client: NewClient(nil)}
	if _, _, err := fetchAll(f, addr, "a1", 0); err == nil || !strings.Contains(err.Error(), "not signed with the job's secret") {
		t.Errorf("fetch with another job's secret: %v", err)
	}
}

// TestCorruptSegmentFailsTheFetch flips a byte of the served map output
// after its checksum was taken: the fetch reads the bytes but Verify
// reports the corruption (the task engine makes it a fetch failure).
func TestCorruptSegmentFailsTheFetch(t *testing.T) {
	secret, _ := NewSecret()
	out, addr := served(t, secret)
	f := &Fetcher{JobID: "j1", Secret: secret, Client: NewClient(nil)}
	if _, _, err := fetchAll(f, addr, "a1", 1); err != nil {
		t.Fatalf("control, intact segment: %v", err)
	}
	b, _ := os.ReadFile(out.Path)
	b[5] ^= 0x20 // in segment 1
	os.WriteFile(out.Path, b, 0o644)
	if _, _, err := fetchAll(f, addr, "a1", 1); !errors.Is(err, mapreduce.ErrCorruptSegment) {
		t.Fatalf("corrupt segment: %v, want ErrCorruptSegment", err)
	}
	if got, _, err := fetchAll(f, addr, "a1", 0); err != nil || got != "aaaa" {
		t.Fatalf("the intact segment beside it: %q, %v", got, err)
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
