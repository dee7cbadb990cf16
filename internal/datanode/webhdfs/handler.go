// Package webhdfs is the datanode side of WebHDFS: the second step of
// CREATE, APPEND and OPEN, and GETFILECHECKSUM, which the namenode
// redirects to a datanode's HTTP port. It moves the bytes with the
// ordinary client (internal/client), except that OPEN reads the blocks
// its datanode holds from that datanode's store (datanode.LocalReplicas),
// after the client has opened the file; it acts as the user the namenode
// authenticated: the redirect URL's delegation= token, signed by the
// namenode, is the client's credential, so the namenode checks it on every
// call and a datanode cannot be made to act for anyone else. The wire
// (parameters, JSON shapes, exceptions) is package internal/webhdfs, which
// the namenode's side uses too.
//
// It is a subpackage rather than part of package datanode because it
// needs the client, as HDFS's datanode WebHdfsHandler uses a DFSClient:
// the datanode daemon itself imports no client (internal/layering allows
// this one edge to this package only), so the launcher builds the handler
// and mounts it on the datanode's HTTP server (datanode.Config.WebHDFS).
package webhdfs

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"

	"smarth/internal/auth"
	"smarth/internal/client"
	"smarth/internal/datanode"
	"smarth/internal/webhdfs"
)

// Config configures a datanode's WebHDFS handler.
type Config struct {
	NameNode   string // the namenode's gRPC address
	ClientHost string // this datanode's host name: writes place their first replica here
	WriteMode  string // client write mode ("" = the client's default)
	// TLS is the client side of the wire's TLS (the datanode's own
	// Wire.Client()), nil when the cluster runs without it.
	TLS    *tls.Config
	Logger *slog.Logger
	// Client adjusts each request's client config (tests).
	Client func(*client.Config)
}

// Handler serves /webhdfs/v1/ on a datanode.
type Handler struct {
	cfg   Config
	log   *slog.Logger
	local atomic.Pointer[datanode.LocalReplicas] // set by the datanode that mounts the handler
}

// UseLocalReplicas is called by the datanode that mounts the handler:
// OPEN then reads the blocks that datanode holds from its own store.
func (h *Handler) UseLocalReplicas(l datanode.LocalReplicas) { h.local.Store(&l) }

// New returns the datanode-side handler.
func New(cfg Config) *Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handler{cfg: cfg, log: cfg.Logger}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("panic in webhdfs handler", "url", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			webhdfs.WriteError(w, webhdfs.Exception("RuntimeException", fmt.Sprintf("internal datanode error: %v", v)))
		}
	}()
	// Browsers (the namenode console's file manager) reach datanodes
	// from the namenode's origin. Any origin may: the request carries
	// its proof in the URL (the redirect's token), never in cookies, so
	// a page can do nothing here its user could not.
	w.Header().Set("Access-Control-Allow-Origin", "*")
	if r.Method == http.MethodOptions {
		w.Header().Set("Access-Control-Allow-Methods", "GET, PUT, POST")
		w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if err := h.serve(w, r); err != nil {
		re := webhdfs.FromError(err)
		h.log.Debug("webhdfs error", "url", r.URL.Path, "error", re)
		webhdfs.WriteError(w, re)
	}
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) error {
	p, err := webhdfs.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	op := strings.ToUpper(p.Str("op"))
	path, err := webhdfs.CleanPath("path", strings.TrimPrefix(r.URL.Path, webhdfs.Prefix))
	if err != nil {
		return err
	}
	var run func(context.Context, *client.FileSystem, http.ResponseWriter, *http.Request, webhdfs.Params, string) error
	switch {
	case r.Method == http.MethodPut && op == "CREATE":
		run = h.create
	case r.Method == http.MethodPost && op == "APPEND":
		run = h.append
	case r.Method == http.MethodGet && op == "OPEN":
		run = h.open
	case r.Method == http.MethodGet && op == "GETFILECHECKSUM":
		run = h.checksum
	default:
		return webhdfs.Unsupported(fmt.Sprintf("%s op=%s is not served by a datanode; send it to the namenode", r.Method, op))
	}
	tok := p.Str("delegation")
	if tok == "" {
		return webhdfs.Exception("SecurityException", "no delegation token: a datanode serves only the URL the namenode redirected to (start at the namenode)")
	}
	// A redirect token names the one operation and path it was issued
	// for. The namenode checks that (and the signature) on every call;
	// checking here too refuses what the namenode cannot tell apart
	// (GETFILECHECKSUM and OPEN make the same calls).
	if t, err := auth.PeekToken(tok); err == nil && t.Kind == auth.KindRedirect && (t.Op != op || t.Path != path) {
		return webhdfs.Exception("SecurityException", fmt.Sprintf("the redirect token was issued for %s %s, not %s %s (start at the namenode)", t.Op, t.Path, op, path))
	}
	cfg := client.Config{NameNode: h.cfg.NameNode, Credential: tok, ClientHost: h.cfg.ClientHost, WriteMode: h.cfg.WriteMode,
		TLS: h.cfg.TLS, Logger: h.log}
	if h.cfg.Client != nil {
		h.cfg.Client(&cfg)
	}
	fsys, err := client.New(cfg)
	if err != nil {
		return err
	}
	defer fsys.Close()
	return run(r.Context(), fsys, w, r, p, path)
}

// create is CREATE's second step: the body becomes the file. The answer
// is 201 with the file's URI in Location, after the file is complete.
func (h *Handler) create(ctx context.Context, fsys *client.FileSystem, w http.ResponseWriter, r *http.Request, p webhdfs.Params, path string) error {
	overwrite, err := p.Bool("overwrite", false)
	if err != nil {
		return err
	}
	// As HDFS's datanode (WebHdfsHandler, then DFSClient.create with its
	// confForCreate's umask 000): the permission (default 644) is the
	// mode as given, WebHdfsFileSystem having applied its umask and sent
	// the original as unmaskedpermission, which only matters to HDFS under
	// a default ACL; here it is checked and unused.
	perm, err := p.Permission("permission", 0o644)
	if err != nil {
		return err
	}
	if _, err := p.Permission("unmaskedpermission", 0o644); err != nil {
		return err
	}
	bs, err := p.Long("blocksize", 0, 1)
	if err != nil {
		return err
	}
	repl, err := p.Short("replication", 0, 1)
	if err != nil {
		return err
	}
	fw, err := fsys.Create(ctx, path, client.CreateOptions{Overwrite: overwrite, Perm: fs.FileMode(perm), Masked: true, BlockSize: bs, Replication: int(repl)})
	if err != nil {
		return err
	}
	if err := h.fill(fw, r.Body); err != nil {
		return err
	}
	w.Header().Set("Location", (&url.URL{Scheme: "hdfs", Host: h.cfg.NameNode, Path: path}).String())
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusCreated)
	return nil
}

// writer is what create and append fill.
type writer interface {
	io.ReaderFrom
	Close() error
	Abort() error
}

// fill streams body into fw's packets (ReadFrom: no intermediate copy)
// and closes it; a body cut short, or a pipeline that fails, aborts the
// write instead of completing a truncated file.
func (h *Handler) fill(fw writer, body io.Reader) error {
	if _, err := fw.ReadFrom(body); err != nil {
		_ = fw.Abort()
		return err
	}
	return fw.Close()
}

// open is OPEN's second step: offset and length pick the bytes. The
// client opens the file, so the namenode checks the caller's permission
// and hands out the block locations and tokens; blocks this datanode holds
// are then read from its own store (local), the others, and any local
// replica that cannot be served or turns out corrupt, through the client.
func (h *Handler) open(ctx context.Context, fsys *client.FileSystem, w http.ResponseWriter, r *http.Request, p webhdfs.Params, path string) error {
	off, err := p.Long("offset", 0, 0)
	if err != nil {
		return err
	}
	length, err := p.Long("length", -1, 0)
	if err != nil && p.Str("length") != "" {
		return err
	}
	fr, err := fsys.Open(ctx, path)
	if err != nil {
		return err
	}
	defer fr.Close()
	size := fr.Size()
	if off > size {
		return webhdfs.Exception("IOException", fmt.Sprintf("Offset=%d out of the range [0, %d); OPEN, path=%s", off, size, path))
	}
	n := size - off
	if length >= 0 && length < n {
		n = length
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusOK)
	out := &countWriter{w: w}
	if err := h.copyRange(out, fr, off, off+n); err != nil {
		// Headers are gone: the client sees a body shorter than
		// Content-Length, which every HTTP client reports.
		h.log.Warn("webhdfs open: read failed mid-response", "path", path, "sent", out.n, "of", n, "error", err)
	}
	return nil
}

// copyRange writes the file's bytes [from, to) to out, block by block.
func (h *Handler) copyRange(out *countWriter, fr *client.FileReader, from, to int64) error {
	local := h.local.Load()
	pos := from
	if local != nil {
		for _, lb := range fr.LocatedBlocks() {
			bstart, bend := lb.GetOffset(), lb.GetOffset()+lb.GetBlock().GetNumBytes()
			if pos >= to {
				return nil
			}
			if bend <= pos || bstart > pos {
				continue
			}
			end := min(bend, to)
			m, err := (*local).ReadReplica(out, lb, pos-bstart, end-pos)
			pos += m
			if out.err != nil {
				return out.err // the caller went away
			}
			if err != nil && !errors.Is(err, datanode.ErrNoLocalReplica) {
				h.log.Warn("webhdfs open: local replica failed; reading the rest of the block elsewhere",
					"path", fr.Path(), "block", lb.GetBlock().GetBlockId(), "at", pos, "error", err)
			}
			if pos < end {
				if err := h.copyClient(out, fr, pos, end); err != nil {
					return err
				}
				pos = end
			}
		}
	}
	if pos < to {
		return h.copyClient(out, fr, pos, to)
	}
	return nil
}

// copyClient writes [from, to) read through the client (other replicas).
func (h *Handler) copyClient(out *countWriter, fr *client.FileReader, from, to int64) error {
	if _, err := fr.Seek(from, io.SeekStart); err != nil {
		return err
	}
	// WriteTo hands over the verified packets without a copy; the limit
	// stops it after the range.
	lw := &limitWriter{w: out, n: to - from}
	if _, err := fr.WriteTo(lw); err != nil && !(errors.Is(err, errLimit) && lw.n == 0) {
		return err
	}
	if lw.n > 0 {
		return fmt.Errorf("file ended %d bytes before offset %d", lw.n, to)
	}
	return nil
}

// countWriter counts what reached the response and keeps its first
// error, so a failed write (the caller hung up) is told apart from a
// failed read.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

func (h *Handler) checksum(ctx context.Context, fsys *client.FileSystem, w http.ResponseWriter, r *http.Request, p webhdfs.Params, path string) error {
	sum, err := fsys.FileChecksum(ctx, path)
	if err != nil {
		return err
	}
	webhdfs.WriteJSON(w, map[string]any{"FileChecksum": map[string]any{
		"algorithm": sum.Algorithm(), "bytes": sum.String(), "length": len(sum.Bytes()),
	}})
	return nil
}

// append is APPEND's second step: the body is added to the end of the
// file; 200 with no body once the file is complete again.
func (h *Handler) append(ctx context.Context, fsys *client.FileSystem, w http.ResponseWriter, r *http.Request, p webhdfs.Params, path string) error {
	fw, err := fsys.Append(ctx, path, client.AppendOptions{})
	if err != nil {
		return err
	}
	if err := h.fill(fw, r.Body); err != nil {
		return err
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(http.StatusOK)
	return nil
}

// errLimit ends a ranged OPEN's copy once its bytes are out.
var errLimit = errors.New("length reached")

// limitWriter passes on at most n bytes, then refuses.
type limitWriter struct {
	w io.Writer
	n int64
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errLimit
	}
	cut := int64(len(p)) > l.n
	if cut {
		p = p[:l.n]
	}
	n, err := l.w.Write(p)
	l.n -= int64(n)
	if err == nil && cut {
		err = errLimit
	}
	return n, err
}
