package shuffle

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"smarth/internal/mapreduce"
)

// Path is the URL path map output is served under.
const Path = "/mapOutput"

// Lookup finds the output of a finished map attempt of a job.
type Lookup func(jobID, attempt string) (*mapreduce.MapOutput, bool)

// Secrets finds a job's shuffle secret (false: the node knows no such
// job, and serves nothing of it).
type Secrets func(jobID string) ([]byte, bool)

// Request names one partition of one map attempt's output.
type Request struct {
	JobID   string
	Attempt string
	Reduce  int
}

// ParseRequest reads a request from URL query values.
func ParseRequest(q url.Values) (Request, error) {
	r := Request{JobID: q.Get("job"), Attempt: q.Get("attempt")}
	if r.JobID == "" || r.Attempt == "" {
		return r, errors.New("job and attempt are required")
	}
	n, err := strconv.Atoi(q.Get("reduce"))
	if err != nil || n < 0 {
		return r, fmt.Errorf("bad reduce %q", q.Get("reduce"))
	}
	r.Reduce = n
	return r, nil
}

// URL is the address of a request on a node's shuffle server.
func (r Request) URL(addr string) string {
	q := url.Values{"job": {r.JobID}, "attempt": {r.Attempt}, "reduce": {strconv.Itoa(r.Reduce)}}
	return "http://" + addr + Path + "?" + q.Encode()
}

// Handler serves map output partitions, from the map output's file
// (sendfile) or from memory, to requests signed with the job's secret.
func Handler(lookup Lookup, secrets Secrets) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, err := ParseRequest(req.URL.Query())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		secret, ok := secrets(r.JobID)
		sig := req.Header.Get(HashHeader)
		if !ok || sig == "" || !verify(secret, r.canonical(), sig) {
			// One answer for an unknown job and a bad signature: the
			// refusal tells an unauthenticated caller nothing.
			http.Error(w, "shuffle request for job "+r.JobID+" is not signed with the job's secret", http.StatusUnauthorized)
			return
		}
		out, ok := lookup(r.JobID, r.Attempt)
		if !ok {
			http.Error(w, "no such map output: "+r.Attempt, http.StatusNotFound)
			return
		}
		if r.Reduce >= len(out.Index) {
			http.Error(w, fmt.Sprintf("no partition %d", r.Reduce), http.StatusNotFound)
			return
		}
		w.Header().Set(ReplyHeader, sign(secret, sig))
		seg := out.Index[r.Reduce]
		if out.Data != nil {
			if seg.Offset < 0 || seg.Length < 0 || seg.Offset+seg.Length > int64(len(out.Data)) {
				http.Error(w, "bad map output index", http.StatusInternalServerError)
				return
			}
			setSegmentHeaders(w, seg)
			w.Write(out.Data[seg.Offset : seg.Offset+seg.Length])
			return
		}
		f, err := os.Open(out.Path)
		if err != nil {
			http.Error(w, "map output gone: "+err.Error(), http.StatusGone)
			return
		}
		defer f.Close()
		if _, err := f.Seek(seg.Offset, io.SeekStart); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		setSegmentHeaders(w, seg)
		// A LimitedReader over an *os.File lets net/http use sendfile.
		io.Copy(w, &io.LimitedReader{R: f, N: seg.Length})
	})
}

func setSegmentHeaders(w http.ResponseWriter, seg mapreduce.SegmentIndex) {
	w.Header().Set("Content-Length", strconv.FormatInt(seg.Length, 10))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set(CRCHeader, strconv.FormatUint(uint64(seg.CRC), 16))
}

// Fetcher fetches partitions over HTTP; it implements mapreduce.Fetcher.
// Each request is signed with Secret, the job's shuffle secret; the
// reply must be signed back and carry the segment's checksum, which the
// returned reader checks (mapreduce.CheckedSegment).
type Fetcher struct {
	JobID  string
	Secret []byte
	Client *http.Client
	// HTTPS fetches over TLS (the cluster's tls switch; Client then
	// carries the CA).
	HTTPS bool
}

var _ mapreduce.Fetcher = (*Fetcher)(nil)

// NewClient returns an HTTP client tuned for many fetches to few hosts;
// t (nil: none) verifies HTTPS servers.
func NewClient(t *tls.Config) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ReadBufferSize:      256 << 10,
		TLSClientConfig:     t,
	}
	return &http.Client{Transport: tr}
}

// Fetch requests one partition.
func (f *Fetcher) Fetch(ctx context.Context, ref mapreduce.MapOutputRef, reduce int) (io.ReadCloser, int64, error) {
	r := Request{JobID: f.JobID, Attempt: ref.Attempt, Reduce: reduce}
	u := r.URL(ref.Addr)
	if f.HTTPS {
		u = "https" + strings.TrimPrefix(u, "http")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, 0, err
	}
	sig := r.Sign(f.Secret)
	req.Header.Set(HashHeader, sig)
	resp, err := f.Client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: %s: %s", ref.Addr, resp.Status, b)
	}
	if resp.ContentLength < 0 {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: response without length", ref.Addr)
	}
	if !verify(f.Secret, sig, resp.Header.Get(ReplyHeader)) {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: reply to %s not signed with the job's secret", ref.Addr, ref.Attempt)
	}
	crc, err := strconv.ParseUint(resp.Header.Get(CRCHeader), 16, 32)
	if err != nil {
		resp.Body.Close()
		return nil, 0, fmt.Errorf("%s: reply to %s without a valid segment checksum (%s: %q)", ref.Addr, ref.Attempt, CRCHeader, resp.Header.Get(CRCHeader))
	}
	return mapreduce.CheckedSegment(resp.Body, uint32(crc)), resp.ContentLength, nil
}
