package webhdfs_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"smarth/internal/testcluster"
)

// A WebHDFS upload and download that each take several times the HTTP
// ports' no-progress timeout (http_io_timeout, here 300 ms on the
// namenode and the datanodes) complete while their bytes move: the
// deadlines of internal/httpserver move on with every read and write
// rather than bounding the whole transfer.
func TestSlowTransfersOutlastHTTPTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("a paced transfer of several seconds; skipped in -short mode")
	}
	short := map[string]any{"http_io_timeout": "300ms", "http_idle_timeout": "300ms"}
	_, w := startCluster(t, testcluster.Options{DataNodes: 1, BlockSize: 1 << 20, Simple: true, NameNode: short, DataNode: short})
	su := "user.name=" + osUser(t)
	data := randBytes(3 << 20)
	const piece, pause = 128 << 10, 100 * time.Millisecond // 24 pieces: 2.4 s, eight timeouts

	r := w.op("PUT", "/slow", "CREATE", su)
	if r.code != http.StatusTemporaryRedirect {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	pr, pw := io.Pipe()
	go func() {
		for off := 0; off < len(data); off += piece {
			if _, err := pw.Write(data[off:min(off+piece, len(data))]); err != nil {
				return
			}
			time.Sleep(pause)
		}
		pw.Close()
	}()
	req, _ := http.NewRequest("PUT", r.hdr.Get("Location"), pr)
	req.ContentLength = int64(len(data))
	res, err := w.hc.Do(req)
	if err != nil {
		t.Fatalf("paced upload: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("paced upload: %s %s", res.Status, b)
	}

	r = w.op("GET", "/slow", "OPEN", su)
	loc, err := url.Parse(r.hdr.Get("Location"))
	if r.code != http.StatusTemporaryRedirect || err != nil {
		t.Fatalf("OPEN: %d %s", r.code, r.body)
	}
	res, err = w.hc.Get(loc.String())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var got bytes.Buffer
	buf := make([]byte, piece)
	for {
		n, err := io.ReadFull(res.Body, buf)
		got.Write(buf[:n])
		if err != nil {
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				t.Fatalf("paced download after %d bytes: %v", got.Len(), err)
			}
			break
		}
		time.Sleep(pause)
	}
	if !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("paced download: %d bytes, want the %d written", got.Len(), len(data))
	}
}
