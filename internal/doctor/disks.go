package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// mount is one line of /proc/self/mounts.
type mount struct{ point, fstype, options string }

func (e *Env) mounts() ([]mount, error) {
	text, err := e.read("proc/self/mounts")
	if err != nil {
		return nil, err
	}
	var ms []mount
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 {
			// Mount points escape spaces as \040.
			ms = append(ms, mount{strings.ReplaceAll(f[1], `\040`, " "), f[2], f[3]})
		}
	}
	return ms, nil
}

// mountOf is the mount holding path: the longest mount point that is a
// prefix of it (the last such line wins, as later mounts shadow earlier).
func mountOf(ms []mount, path string) (mount, bool) {
	best, found := mount{}, false
	for _, m := range ms {
		if (path == m.point || strings.HasPrefix(path, strings.TrimSuffix(m.point, "/")+"/")) && len(m.point) >= len(best.point) {
			best, found = m, true
		}
	}
	return best, found
}

func checkDataDirs(_ context.Context, e *Env) []Result {
	if len(e.DataDirs) == 0 {
		return []Result{{ID: "datadir", Title: "data directories", Status: Skip,
			Value: "none given", Why: "give --data-dir DIR or --cluster to check mounts, space and permissions"}}
	}
	ms, merr := e.mounts()
	var out []Result
	for _, d := range e.DataDirs {
		d = filepath.Clean(d)
		out = append(out, e.checkMount(ms, merr, d), e.checkSpace(d), e.checkPerm(d))
	}
	return out
}

func (e *Env) checkMount(ms []mount, merr error, dir string) Result {
	r := Result{ID: "mount:" + dir, Title: "mount options of " + dir,
		Why: "every block read updates the file's access time unless mounted noatime: a metadata write per read"}
	if merr != nil {
		r.Status, r.Value = Skip, merr.Error()
		return r
	}
	m, ok := mountOf(ms, dir)
	if !ok {
		r.Status, r.Value = Skip, "no mount found"
		return r
	}
	r.Value = fmt.Sprintf("%s on %s (%s)", m.fstype, m.point, m.options)
	opts := strings.Split(m.options, ",")
	switch {
	case m.fstype == "tmpfs" || m.fstype == "ramfs":
		r.Status = Warn
		r.Why = "in memory: the blocks are lost at reboot (fine for a throw-away test cluster)"
		r.FixCmd = "put the data directory on a disk file system"
		return r
	case contains(opts, "noatime"):
		r.Status = OK
	case contains(opts, "strictatime"):
		r.Status = Fail
	default:
		// relatime (the default) writes atime at most daily per file:
		// cheap, but noatime is what the vendors ask for.
		r.Status = Warn
	}
	if r.Status != OK {
		r.FixCmd = fmt.Sprintf("mount -o remount,noatime %s  # and noatime in /etc/fstab", m.point)
	}
	return r
}

func (e *Env) checkSpace(dir string) Result {
	r := Result{ID: "space:" + dir, Title: "free space of " + dir,
		Why: "a datanode with a full disk fails writes and its volume; HDFS reserves space (dfs.datanode.du.reserved) for this; want >= 20% and >= 1 GiB free"}
	if e.Statfs == nil {
		r.Status, r.Value = Skip, "no statfs"
		return r
	}
	u, err := e.Statfs(e.existing(dir))
	if err != nil || u.Total == 0 {
		r.Status, r.Value = Skip, errText(err, "empty file system")
		return r
	}
	pct := 100 * float64(u.Free) / float64(u.Total)
	r.Value = fmt.Sprintf("%.1f GiB free of %.1f GiB (%.0f%%)", gib(u.Free), gib(u.Total), pct)
	switch {
	case pct < 10 || u.Free < 1<<30:
		r.Status = Fail
	case pct < 20:
		r.Status = Warn
	default:
		r.Status = OK
	}
	if r.Status != OK {
		r.FixCmd = "free space on " + dir + " or add another data directory on a different disk"
	}
	return r
}

func gib(n uint64) float64 { return float64(n) / (1 << 30) }

// existing is the nearest existing directory of dir under the root: a data
// directory not made yet lives on its parent's file system.
func (e *Env) existing(dir string) string {
	p := e.path(dir)
	for {
		if _, err := os.Stat(p); err == nil || p == e.Root || p == "/" || p == "." {
			return p
		}
		p = filepath.Dir(p)
	}
}

func (e *Env) checkPerm(dir string) Result {
	r := Result{ID: "perm:" + dir, Title: "permissions of " + dir,
		Why: "the daemon's user must own its data directory, and others must not read blocks around the file system's permissions (HDFS: dfs.datanode.data.dir.perm 700)"}
	fi, err := os.Stat(e.path(dir))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.Status, r.Value = OK, "absent: the daemon creates it"
		return r
	case err != nil:
		r.Status, r.Value = Fail, err.Error()
		return r
	case !fi.IsDir():
		r.Status, r.Value = Fail, "not a directory"
		r.FixCmd = "remove " + dir + " or choose another data directory"
		return r
	}
	mode := fi.Mode().Perm()
	uid := -1
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		uid = int(st.Uid)
	}
	r.Value = fmt.Sprintf("mode %04o, owner uid %d", mode, uid)
	switch {
	case uid != e.UID && e.UID != 0:
		r.Status = Fail
		r.FixCmd = fmt.Sprintf("chown -R %d %s", e.UID, dir)
	case mode&0o077 != 0:
		r.Status = Warn
		r.FixCmd = "chmod 700 " + dir
	default:
		r.Status = OK
	}
	return r
}
