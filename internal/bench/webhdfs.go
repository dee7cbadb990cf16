package bench

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"time"

	"smarth/internal/client"
)

// WebHDFSOptions describe `smarth bench webhdfs`: the same file put and
// got through the native client and through WebHDFS (namenode redirect,
// datanode HTTP), in interleaved rounds.
type WebHDFSOptions struct {
	Size        int64 // bytes per file; required
	Replication int   // 0 = namenode default
	BlockSize   int64 // 0 = namenode default
	Runs        int   // rounds; default 3
	Dir         string
	Seed        uint64
	// URL is the namenode's web address, e.g. http://127.0.0.1:9870.
	URL string
	// Authorization is sent with every WebHDFS request ("Bearer
	// <credential>" on a secure cluster); "" sends user.name=User.
	Authorization string
	User          string
	TLS           *tls.Config // for https URLs
	Out           io.Writer
}

func (o *WebHDFSOptions) setDefaults() error {
	if o.Size <= 0 {
		return errors.New("--size must be positive")
	}
	if o.URL == "" {
		return errors.New("the namenode's web address is required")
	}
	if o.Runs <= 0 {
		o.Runs = 3
	}
	if o.Dir == "" {
		o.Dir = "/benchmarks/webhdfs"
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	return nil
}

// The two ways a file travels. "classic" is the native client's classic
// write (and read), so the tables' "vs classic" column is WebHDFS's cost.
const (
	viaNative  = "classic"
	viaWebHDFS = "webhdfs"
)

// WebHDFS times puts and gets of Size bytes through both paths, Runs
// rounds with the order alternating (RunOrder), and returns the put and
// get results. After the first round the two files' checksums must agree:
// the same bytes arrived both ways.
func WebHDFS(ctx context.Context, fsys *client.FileSystem, opts WebHDFSOptions) (put, get *Result, err error) {
	if err := opts.setDefaults(); err != nil {
		return nil, nil, err
	}
	if err := warmUp(ctx, fsys, opts.Dir); err != nil {
		return nil, nil, err
	}
	w := &webClient{opts: opts, hc: &http.Client{
		// Buffers of a size a bulk client would use: with the 4 KiB
		// defaults the benchmark would time this client's syscalls.
		Transport: &http.Transport{TLSClientConfig: opts.TLS, MaxIdleConnsPerHost: 4,
			WriteBufferSize: 1 << 20, ReadBufferSize: 1 << 20},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
	// One WebHDFS call untimed, so connection set-up is not in run 1.
	if _, err := w.call(ctx, http.MethodGet, opts.Dir, "GETFILESTATUS", nil, 0); err != nil {
		return nil, nil, err
	}
	data := NewData(opts.Seed)
	put = &Result{Op: "put", Time: time.Now(), Size: opts.Size, Replication: opts.Replication, BlockSize: opts.BlockSize}
	get = &Result{Op: "get", Time: put.Time, Size: opts.Size, Replication: opts.Replication, BlockSize: opts.BlockSize}
	modes := []string{viaNative, viaWebHDFS}
	file := func(mode string) string { return path.Join(opts.Dir, mode+".dat") }
	for i := range opts.Runs {
		for _, mode := range RunOrder(modes, i) {
			if err := Settle(false); err != nil {
				return put, get, err
			}
			start := time.Now()
			if mode == viaNative {
				_, err = putOnce(ctx, fsys, file(mode), "classic", data, PutOptions{Size: opts.Size, Replication: opts.Replication, BlockSize: opts.BlockSize})
			} else {
				err = w.put(ctx, file(mode), data)
			}
			if err != nil {
				return put, get, fmt.Errorf("%s put: %w", mode, err)
			}
			put.add(mode, file(mode), time.Since(start).Seconds(), opts)
		}
		if i == 0 {
			if err := sameChecksum(ctx, fsys, file(viaNative), file(viaWebHDFS)); err != nil {
				return put, get, err
			}
		}
		for _, mode := range RunOrder(modes, i+1) {
			start := time.Now()
			var n int64
			if mode == viaNative {
				n, err = readAll(ctx, fsys, file(mode))
			} else {
				n, err = w.get(ctx, file(mode))
			}
			if err == nil && n != opts.Size {
				err = fmt.Errorf("read %d bytes of %d", n, opts.Size)
			}
			if err != nil {
				return put, get, fmt.Errorf("%s get: %w", mode, err)
			}
			get.add(mode, file(mode), time.Since(start).Seconds(), opts)
		}
	}
	if st, err := fsys.Stat(ctx, file(viaNative)); err == nil {
		put.Replication, put.BlockSize = st.Replication, st.BlockSize
		get.Replication, get.BlockSize = st.Replication, st.BlockSize
	}
	put.Summarize()
	get.Summarize()
	return put, get, nil
}

func (r *Result) add(mode, p string, secs float64, opts WebHDFSOptions) {
	run := Run{Mode: mode, Index: len(r.Runs), Seconds: secs, MiBps: mibps(opts.Size, secs), Path: p}
	r.Runs = append(r.Runs, run)
	fmt.Fprintf(opts.Out, "%s run %2d  %-8s %8.2f s  %8.1f MiB/s\n", r.Op, run.Index+1, mode, secs, run.MiBps)
}

func sameChecksum(ctx context.Context, fsys *client.FileSystem, a, b string) error {
	ca, err := fsys.FileChecksum(ctx, a)
	if err != nil {
		return err
	}
	cb, err := fsys.FileChecksum(ctx, b)
	if err != nil {
		return err
	}
	if ca.String() != cb.String() {
		return fmt.Errorf("%s and %s hold different bytes (checksums %s, %s)", a, b, ca, cb)
	}
	return nil
}

func readAll(ctx context.Context, fsys *client.FileSystem, p string) (int64, error) {
	r, err := fsys.Open(ctx, p)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	return r.WriteTo(io.Discard)
}

// webClient speaks WebHDFS as a plain HTTP client would: step one to the
// namenode, step two to the Location it answers.
type webClient struct {
	opts WebHDFSOptions
	hc   *http.Client
}

func (w *webClient) do(ctx context.Context, method, u string, body io.Reader, size int64) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.ContentLength = size
	}
	if w.opts.Authorization != "" {
		req.Header.Set("Authorization", w.opts.Authorization)
	}
	res, err := w.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode >= 300 && res.StatusCode != http.StatusTemporaryRedirect {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		return nil, fmt.Errorf("%s %s: %s: %s", method, u, res.Status, b)
	}
	return res, nil
}

// call runs step one of op on the namenode and returns the response.
func (w *webClient) call(ctx context.Context, method, p, op string, q url.Values, _ int64) (*http.Response, error) {
	if q == nil {
		q = url.Values{}
	}
	q.Set("op", op)
	if w.opts.Authorization == "" && w.opts.User != "" {
		q.Set("user.name", w.opts.User)
	}
	res, err := w.do(ctx, method, w.opts.URL+"/webhdfs/v1"+p+"?"+q.Encode(), nil, 0)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusTemporaryRedirect {
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
	}
	return res, nil
}

func (w *webClient) redirect(ctx context.Context, method, p, op string, q url.Values) (string, error) {
	res, err := w.call(ctx, method, p, op, q, 0)
	if err != nil {
		return "", err
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusTemporaryRedirect || loc == "" {
		return "", fmt.Errorf("%s %s: want a 307 redirect, got %s", op, p, res.Status)
	}
	return loc, nil
}

func (w *webClient) put(ctx context.Context, p string, data *Data) error {
	q := url.Values{"overwrite": {"true"}}
	if w.opts.Replication > 0 {
		q.Set("replication", strconv.Itoa(w.opts.Replication))
	}
	if w.opts.BlockSize > 0 {
		q.Set("blocksize", strconv.FormatInt(w.opts.BlockSize, 10))
	}
	loc, err := w.redirect(ctx, http.MethodPut, p, "CREATE", q)
	if err != nil {
		return err
	}
	res, err := w.do(ctx, http.MethodPut, loc, data.Reader(w.opts.Size), w.opts.Size)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		return fmt.Errorf("CREATE %s: %s", p, res.Status)
	}
	return nil
}

func (w *webClient) get(ctx context.Context, p string) (int64, error) {
	loc, err := w.redirect(ctx, http.MethodGet, p, "OPEN", nil)
	if err != nil {
		return 0, err
	}
	res, err := w.do(ctx, http.MethodGet, loc, nil, 0)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	// io.Discard's ReadFrom reads 8 KiB at a time; discard reads 1 MiB.
	return io.CopyBuffer(discard{}, res.Body, make([]byte, 1<<20))
}

// discard is io.Discard without ReadFrom, so CopyBuffer uses its buffer.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
