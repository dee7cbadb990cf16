package shuffle

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"smarth/internal/mapreduce"
)

// fuzzSecret is job j1's shuffle secret in the fuzz targets.
var fuzzSecret = bytes.Repeat([]byte{0x5a}, SecretBytes)

// FuzzHandler sends arbitrary queries and signatures to the shuffle
// server of job j1, attempt a1 (segments "aaaa", "bbbbbb", "cc"): it must
// never panic, must serve bytes only to a request carrying the job
// secret's signature of exactly the partition it serves, and then must
// serve that partition whole with its checksum.
func FuzzHandler(f *testing.F) {
	data := []byte("aaaabbbbbbcc")
	out := &mapreduce.MapOutput{Data: data}
	for _, s := range [][2]int64{{0, 4}, {4, 6}, {10, 2}} {
		out.Index = append(out.Index, mapreduce.SegmentIndex{Offset: s[0], Length: s[1], Records: 1,
			CRC: mapreduce.SegmentCRC(data[s[0] : s[0]+s[1]])})
	}
	h := Handler(func(job, attempt string) (*mapreduce.MapOutput, bool) {
		return out, job == "j1" && attempt == "a1"
	}, func(job string) ([]byte, bool) { return fuzzSecret, job == "j1" })
	ok := Request{JobID: "j1", Attempt: "a1", Reduce: 1}
	f.Add("job=j1&attempt=a1&reduce=1", ok.Sign(fuzzSecret))
	f.Add("job=j1&attempt=a1&reduce=2", ok.Sign(fuzzSecret))                                             // signature of another partition
	f.Add("job=j1&attempt=a1&reduce=7", Request{JobID: "j1", Attempt: "a1", Reduce: 7}.Sign(fuzzSecret)) // no such partition
	f.Add("job=j2&attempt=a1&reduce=1", Request{JobID: "j2", Attempt: "a1", Reduce: 1}.Sign(fuzzSecret))
	f.Add("job=j1&attempt=a1&reduce=01", ok.Sign(fuzzSecret))
	f.Add("job=j1&job=j2&attempt=a1&reduce=1", ok.Sign(fuzzSecret))
	f.Add("job=j1&attempt=a1&reduce=1", "")
	f.Add("%zz", "x")
	f.Fuzz(func(t *testing.T, query, sig string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.URL.RawQuery = query
		req.Header.Set(HashHeader, sig)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			if w.Body.Len() > 0 && bytes.Contains(w.Body.Bytes(), data) {
				t.Fatalf("refusal %d carries map output: %q", w.Code, w.Body.Bytes())
			}
			return
		}
		r, err := ParseRequest(req.URL.Query())
		if err != nil {
			t.Fatalf("served a request that does not parse (%v): %q", err, query)
		}
		if sig != r.Sign(fuzzSecret) {
			t.Fatalf("served %+v to signature %q", r, sig)
		}
		seg := out.Index[r.Reduce]
		if !bytes.Equal(w.Body.Bytes(), data[seg.Offset:seg.Offset+seg.Length]) {
			t.Fatalf("partition %d served as %q", r.Reduce, w.Body.Bytes())
		}
		if w.Header().Get(CRCHeader) != strconv.FormatUint(uint64(seg.CRC), 16) || !verify(fuzzSecret, sig, w.Header().Get(ReplyHeader)) {
			t.Fatalf("reply headers %v", w.Header())
		}
	})
}

// rawReply is a transport whose every answer is a raw HTTP response.
type rawReply []byte

func (b rawReply) RoundTrip(req *http.Request) (*http.Response, error) {
	return http.ReadResponse(bufio.NewReader(bytes.NewReader(b)), req)
}

// FuzzFetchReply gives the reduce's fetcher arbitrary bytes as the shuffle
// server's HTTP reply to its request for partition 3 of attempt a1: it
// must never panic, and whatever it hands on as a segment that reads to
// its end and verifies must have come in a reply signed with the job's
// secret, carrying exactly its declared length, with bytes that match the
// declared checksum.
func FuzzFetchReply(f *testing.F) {
	sig := Request{JobID: "j1", Attempt: "a1", Reduce: 3}.Sign(fuzzSecret)
	reply := func(status string, body string, hdr ...string) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "HTTP/1.1 %s\r\n", status)
		for _, h := range hdr {
			b.WriteString(h + "\r\n")
		}
		fmt.Fprintf(&b, "\r\n%s", body)
		return b.Bytes()
	}
	crc := strconv.FormatUint(uint64(mapreduce.SegmentCRC([]byte("segment"))), 16)
	good := []string{"Content-Length: 7", ReplyHeader + ": " + sign(fuzzSecret, sig), CRCHeader + ": " + crc}
	f.Add(reply("200 OK", "segment", good...))
	f.Add(reply("200 OK", "segmenT", good...))
	f.Add(reply("200 OK", "seg", good...))
	f.Add(reply("200 OK", "segment", good[0], good[2]))
	f.Add(reply("200 OK", "segment", good[0], ReplyHeader+": "+sig, good[2]))
	f.Add(reply("200 OK", "segment", good[1], good[2], "Transfer-Encoding: chunked"))
	f.Add(reply("200 OK", "segment", good[0], good[1], CRCHeader+": -1"))
	f.Add(reply("401 Unauthorized", "not signed", "Content-Length: 10"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		fe := &Fetcher{JobID: "j1", Secret: fuzzSecret, Client: &http.Client{Transport: rawReply(raw)}}
		rc, n, err := fe.Fetch(context.Background(), mapreduce.MapOutputRef{Attempt: "a1", Addr: "127.0.0.1:1"}, 3)
		if err != nil {
			return
		}
		defer rc.Close()
		body, err := io.ReadAll(rc)
		if err != nil || rc.(interface{ Verify() error }).Verify() != nil {
			return
		}
		resp, perr := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
		if perr != nil {
			t.Fatalf("accepted a reply that does not parse: %v", perr)
		}
		if resp.StatusCode != http.StatusOK || !verify(fuzzSecret, sig, resp.Header.Get(ReplyHeader)) {
			t.Fatalf("accepted an unsigned reply %d %v", resp.StatusCode, resp.Header)
		}
		if int64(len(body)) != n {
			t.Fatalf("segment of %d bytes declared %d", len(body), n)
		}
		want, _ := strconv.ParseUint(resp.Header.Get(CRCHeader), 16, 32)
		if mapreduce.SegmentCRC(body) != uint32(want) {
			t.Fatalf("segment %q verified against checksum %x", body, want)
		}
	})
}
