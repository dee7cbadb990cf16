// Package diskperm holds the permissions of what the daemons keep on local
// disk (replicas, the namenode's image and edits, task logs, keys, daemon
// logs) and the check each daemon runs over its directories at start, as
// HDFS's DiskChecker does with dfs.datanode.data.dir.perm (700 since
// HDFS-1560): only the daemons' own OS user may read what users stored,
// whatever the umask and whatever an older release left on disk.
//
// The modes are created explicitly (a umask only takes bits away, so
// 0700 and 0600 come out as asked under any umask); Fix narrows what was
// written wider before.
package diskperm

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

const (
	// Dir is a private directory: the block store, the namenode's
	// metadata, task logs, keys, daemon logs.
	Dir fs.FileMode = 0o700
	// File is a private file in one.
	File fs.FileMode = 0o600
	// Passage is a directory others may pass through but not list: the
	// cluster home and its data/ and tokens/, where another OS user reaches
	// only what they know the name of (their own token file, the client
	// config) and whatever lies deeper keeps its own mode.
	Passage fs.FileMode = 0o711
)

// fileBits is what a file under a directory of mode dir may have: the
// directory's bits less the execute (search) bits, so 0700 gives 0600.
func fileBits(dir fs.FileMode) fs.FileMode { return dir.Perm() &^ 0o111 }

// Mode is a configured directory permission, written in octal as HDFS
// writes dfs.datanode.data.dir.perm: `data_dir_perm: 700` (also "0700" or
// "0o700"). The zero Mode stands for Dir.
type Mode fs.FileMode

// ParseMode reads an octal permission such as "700".
func ParseMode(s string) (Mode, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "0o")
	v, err := strconv.ParseUint(t, 8, 32)
	if err != nil || t == "" {
		return 0, fmt.Errorf("%q is not an octal permission like 700", s)
	}
	m := Mode(v)
	if err := m.check(); err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return m, nil
}

func (m Mode) check() error {
	switch {
	case fs.FileMode(m)&^fs.ModePerm != 0:
		return errors.New("only the rwx bits of owner, group and others (at most 777) may be set")
	case fs.FileMode(m)&0o700 != 0o700:
		return errors.New("the owner (the daemon's own user) needs rwx (7xx)")
	}
	return nil
}

// Validate says what is wrong with m as the value of the config key key.
func (m Mode) Validate(key string) error {
	if err := m.check(); err != nil && m != 0 {
		return fmt.Errorf("%s: %s: %w", key, m, err)
	}
	return nil
}

// Perm is m as a directory mode (Dir when m is zero).
func (m Mode) Perm() fs.FileMode {
	if m == 0 {
		return Dir
	}
	return fs.FileMode(m)
}

func (m Mode) String() string { return fmt.Sprintf("%03o", uint32(m)) }

// UnmarshalYAML reads the scalar's text as octal: YAML would read 700 as
// the decimal seven hundred.
func (m *Mode) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a permission is an octal number like 700", n.Line)
	}
	v, err := ParseMode(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*m = v
	return nil
}

// MarshalYAML writes m as octal digits (a string, so that it reads back
// as written).
func (m Mode) MarshalYAML() (any, error) { return m.String(), nil }

// MkdirAll creates dir (and missing parents, with the same mode) and sets
// dir to exactly mode, whatever the umask or an older mode: for Passage,
// which a umask of 077 would narrow, and for a directory that existed
// wider.
func MkdirAll(dir string, mode fs.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm() != mode.Perm() {
		return os.Chmod(dir, mode)
	}
	return nil
}

// warnEach is how many narrowed paths Fix names one by one; past it a
// summary says how many more (a first start after an upgrade may find
// every replica 0644: a WARN per block file would bury the log).
const warnEach = 10

// Fix makes root private: root gets exactly mode (created if missing), as
// HDFS sets its data directories at start, and every directory under it
// loses the bits mode does not allow, every file also the execute bits
// (0700: directories 0700, files 0600). Each narrowed path is a WARN
// naming it and its old and new modes (the first few one by one, then a
// count). Symbolic links are neither followed nor changed: a link out of
// root is not the daemon's to chmod. It walks the whole tree once, so it
// runs at daemon start, before anything is served; it returns how many
// paths it narrowed.
func Fix(root string, mode fs.FileMode, log *slog.Logger) (int, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A sticky directory (/tmp, /var/tmp) is shared by design: a daemon
	// configured with one as its own directory would take it from
	// everyone and chmod their files.
	if fi, err := os.Stat(root); err == nil && fi.Mode()&fs.ModeSticky != 0 {
		return 0, fmt.Errorf("%s is a shared directory (sticky bit set, as /tmp); give the daemon a directory of its own under it", root)
	}
	if err := os.MkdirAll(root, mode); err != nil {
		return 0, err
	}
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != root {
				return nil // removed while we walked (a running daemon's temp file)
			}
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		old := fi.Mode().Perm()
		want := old & mode.Perm()
		switch {
		case p == root:
			want = mode.Perm()
		case !d.IsDir():
			want = old & fileBits(mode)
		}
		if want == old && fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) == 0 {
			return nil
		}
		if err := os.Chmod(p, want); err != nil {
			return err
		}
		if n++; n <= warnEach {
			log.Warn("permission wider than allowed; narrowed", "path", p,
				"old_mode", fmt.Sprintf("%04o", uint32(fi.Mode().Perm())), "new_mode", fmt.Sprintf("%04o", uint32(want)), "allowed", fmt.Sprintf("%04o", uint32(mode.Perm())))
		}
		return nil
	})
	if n > warnEach {
		log.Warn("permissions narrowed", "dir", root, "paths", n, "named_above", warnEach, "allowed", fmt.Sprintf("%04o", uint32(mode.Perm())))
	}
	if err != nil {
		return n, fmt.Errorf("making %s private (%04o): %w", root, uint32(mode.Perm()), err)
	}
	return n, nil
}

// Exposed lists (as "path mode") what under root another OS user could
// read or change by its mode: files with any group or other bit,
// directories that group or others may list or write (search alone, as
// Passage grants, reveals nothing but what one can name). skip, if set,
// leaves out a path and, for a directory, everything under it. Symbolic
// links are not followed. `smarth` tests use it to check a cluster home;
// an operator's audit could too.
func Exposed(root string, skip func(path string) bool) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p != root {
				return nil
			}
			return err
		}
		if skip != nil && skip(p) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		open := fi.Mode().Perm() & 0o077
		if d.IsDir() {
			open &^= 0o011
		}
		if open != 0 {
			out = append(out, fmt.Sprintf("%s %04o", p, uint32(fi.Mode().Perm())))
		}
		return nil
	})
	return out, err
}
