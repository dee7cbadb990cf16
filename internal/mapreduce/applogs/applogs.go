// Package applogs is log aggregation (YARN's yarn.log-aggregation-enable):
// when a job ends, each node manager that ran its attempts uploads their
// stdout and stderr to the DFS, one file per node, under
// remote_app_log_dir/USER/JOB (YARN's /app-logs), written as the job's
// user through the node manager's proxy client: the files are the user's
// (0600, directories 0700), so the namenode's permission checks decide
// who reads them, and `smarth job logs` reads them as its caller after the
// node is gone or the resource manager restarted.
//
// A node's upload is a tar archive (archive/tar) of ATTEMPT/stderr and
// ATTEMPT/stdout entries, written under a ".tmp" name and renamed into
// place, so a reader sees a node's file whole or not at all. The root is
// made 1777 (sticky) by the node manager's own user when missing, as
// YARN's node manager makes it; a user directory someone else owns is
// refused rather than written into.
package applogs

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"smarth/internal/client"
)

// Default is the default remote_app_log_dir (YARN's
// yarn.nodemanager.remote-app-log-dir).
const Default = "/app-logs"

// tmpSuffix marks an upload in progress (YARN's ".tmp").
const tmpSuffix = ".tmp"

// Dir is where a job's aggregated logs live.
func Dir(root, user, job string) string { return path.Join(root, user, job) }

// NodeFile names a node's upload from its node id ("host@addr:port"):
// host_port, as YARN names a node's aggregated file.
func NodeFile(nodeID string) string {
	host, addr, ok := strings.Cut(nodeID, "@")
	if !ok {
		return sanitize(nodeID)
	}
	port := addr[strings.LastIndex(addr, ":")+1:]
	return sanitize(host + "_" + port)
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// EnsureRoot makes the root as the node manager's own user (self) when it
// is missing: mode 1777, so every user can make their directory in it
// and, the sticky bit, none can remove or rename another's. A root that
// others may write without the sticky bit is refused: anyone could move a
// user's directory aside and put their own in its place.
func EnsureRoot(ctx context.Context, self *client.FileSystem, root string) error {
	st, err := self.Stat(ctx, root)
	if errors.Is(err, fs.ErrNotExist) {
		if err := self.Mkdir(ctx, root, 0o777, true); err != nil {
			return fmt.Errorf("remote_app_log_dir %s: create as %s: %w", root, self.User(), err)
		}
		// The namenode's umask narrowed the mode; the sticky bit is set
		// here.
		if err := self.SetPermission(ctx, root, 0o777|fs.ModeSticky); err != nil {
			return fmt.Errorf("remote_app_log_dir %s: chmod 1777: %w", root, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("remote_app_log_dir %s: %w", root, err)
	}
	if !st.IsDir {
		return fmt.Errorf("remote_app_log_dir %s is not a directory", root)
	}
	if st.Mode.Perm() == 0o777 && st.Mode&fs.ModeSticky != 0 {
		return nil
	}
	// Not 1777: another node manager may have made it a moment ago and
	// not set its mode yet (users could not make their directories in
	// it), or an operator made it otherwise. Set it, where this user may
	// (the node managers' service user made it).
	if err := self.SetPermission(ctx, root, 0o777|fs.ModeSticky); err == nil {
		return nil
	}
	if st.Mode.Perm()&0o022 != 0 && st.Mode&fs.ModeSticky == 0 {
		return fmt.Errorf("remote_app_log_dir %s is writable by others (%v) without the sticky bit: any user could replace another's log directory; chmod 1777 it",
			root, st.Mode)
	}
	return nil
}

// ownDir makes dir as fsys's user (mode 0700) unless it exists, and
// refuses it unless that user owns it: a directory another user planted
// would let them remove, or (with a loose mode) read, what is put in it.
func ownDir(ctx context.Context, fsys *client.FileSystem, dir, user string) error {
	err := fsys.Mkdir(ctx, dir, 0o700, false)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("aggregated log dir %s: %w", dir, err)
	}
	st, err := fsys.Stat(ctx, dir)
	if err != nil {
		return fmt.Errorf("aggregated log dir %s: %w", dir, err)
	}
	if !st.IsDir || st.Owner != user {
		return fmt.Errorf("aggregated log dir %s is owned by %s, not %s: not writing %s's logs there (remove it)", dir, st.Owner, user, user)
	}
	return nil
}

// Upload writes the attempts' logs under localJob (ATTEMPT/stderr,
// ATTEMPT/stdout, as the node manager keeps them) to root/USER/JOB/node,
// through fsys, a client acting as user. It returns how many attempts it
// uploaded; none (no file written) when the node ran none of the job's.
func Upload(ctx context.Context, fsys *client.FileSystem, root, user, job, node, localJob string) (int, error) {
	attempts, err := localAttempts(localJob)
	if err != nil || len(attempts) == 0 {
		return 0, err
	}
	userDir := path.Join(root, user)
	if err := ownDir(ctx, fsys, userDir, user); err != nil {
		return 0, err
	}
	jobDir := path.Join(userDir, job)
	if err := ownDir(ctx, fsys, jobDir, user); err != nil {
		return 0, err
	}
	final := path.Join(jobDir, node)
	tmp := final + tmpSuffix
	w, err := fsys.Create(ctx, tmp, client.CreateOptions{Overwrite: true, Perm: 0o600, NoCreateParent: true})
	if err != nil {
		return 0, fmt.Errorf("aggregated logs %s: %w", tmp, err)
	}
	if err := writeTar(w, localJob, attempts); err != nil {
		w.Close()
		fsys.Delete(ctx, tmp, false)
		return 0, fmt.Errorf("aggregated logs %s: %w", tmp, err)
	}
	if err := w.Close(); err != nil {
		fsys.Delete(ctx, tmp, false)
		return 0, fmt.Errorf("aggregated logs %s: %w", tmp, err)
	}
	// A node uploads a job once; a second upload (the job was reported
	// over again after a restart) replaces the first.
	if err := fsys.Delete(ctx, final, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("aggregated logs %s: %w", final, err)
	}
	if err := fsys.Rename(ctx, tmp, final); err != nil {
		return 0, fmt.Errorf("aggregated logs %s: %w", final, err)
	}
	return len(attempts), nil
}

// localAttempts lists the attempt directories under localJob (none when
// the node ran no attempt of the job).
func localAttempts(localJob string) ([]string, error) {
	ents, err := os.ReadDir(localJob)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "attempt_") {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// logFiles are the files of an attempt's log directory that are uploaded.
var logFiles = []string{"stderr", "stdout"}

func writeTar(w io.Writer, localJob string, attempts []string) error {
	tw := tar.NewWriter(w)
	for _, a := range attempts {
		for _, name := range logFiles {
			if err := addFile(tw, filepath.Join(localJob, a, name), a+"/"+name); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

func addFile(tw *tar.Writer, local, name string) error {
	f, err := os.Open(local)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: st.Size(), ModTime: st.ModTime(), Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	// A file still growing is cut at the size its header promised.
	_, err = io.Copy(tw, io.LimitReader(f, st.Size()))
	return err
}

// Log is one attempt's log file as aggregated.
type Log struct {
	Attempt, File string
	Node          string // the node file it came from
	Data          []byte
}

// Read returns the aggregated logs in dir (a job's) that want keeps,
// reading as fsys's user: a caller who may not read dir gets the
// namenode's refusal. fs.ErrNotExist when nothing was aggregated.
func Read(ctx context.Context, fsys *client.FileSystem, dir string, want func(attempt, file string) bool) ([]Log, error) {
	ents, err := fsys.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []Log
	for _, e := range ents {
		if e.IsDir || strings.HasSuffix(e.Name, tmpSuffix) {
			continue
		}
		logs, err := readNode(ctx, fsys, path.Join(dir, e.Name), e.Name, want)
		if err != nil {
			return out, err
		}
		out = append(out, logs...)
	}
	return out, nil
}

// maxEntry bounds one entry read into memory (node managers cap each
// file at log_limit_bytes, 1 MiB by default).
const maxEntry = 256 << 20

func readNode(ctx context.Context, fsys *client.FileSystem, p, node string, want func(attempt, file string) bool) ([]Log, error) {
	f, err := fsys.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	var out []Log
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("aggregated logs %s: %w", p, err)
		}
		attempt, file, ok := strings.Cut(h.Name, "/")
		if !ok || !want(attempt, file) {
			continue
		}
		if h.Size > maxEntry {
			return out, fmt.Errorf("aggregated logs %s: entry %s of %d bytes", p, h.Name, h.Size)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return out, fmt.Errorf("aggregated logs %s: %w", p, err)
		}
		out = append(out, Log{Attempt: attempt, File: file, Node: node, Data: b})
	}
}
