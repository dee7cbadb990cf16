package replog

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"

	"smarth/internal/diskperm"
)

// logStore is raft's log and its term/vote, in one store.
type logStore interface {
	raft.LogStore
	raft.StableStore
	io.Closer
}

// openLogStore opens the log in Dir: with WAL (the default) HashiCorp's
// raft-wal, segment files appended with one fsync per batch of entries;
// else raft-boltdb, whose every commit costs two fsyncs (pages, then
// meta page), which on this machine's disk halves the rate of a round.
func (l *Log) openLogStore() (logStore, error) {
	if l.cfg.LogStore == "bolt" {
		path := filepath.Join(l.cfg.Dir, "raft.db")
		s, err := raftboltdb.New(raftboltdb.Options{Path: path, NoSync: l.cfg.NoSync})
		if err != nil {
			return nil, fmt.Errorf("replog: log store %s: %w", path, err)
		}
		return s, os.Chmod(path, diskperm.File)
	}
	if l.cfg.NoSync {
		return nil, errors.New("replog: NoSync needs LogStore bolt")
	}
	dir := filepath.Join(l.cfg.Dir, "wal")
	// Anything an earlier start or someone else left wide is narrowed
	// and warned about here, before raft-wal makes its own files.
	if _, err := diskperm.Fix(dir, diskperm.Dir, l.log); err != nil {
		return nil, err
	}
	// A zero segment size takes raft-wal's default. v0.4.2 at least:
	// v0.4.0's Close left its meta store locked (a reload in the same
	// process hung) and it panicked on restart after a log suffix was
	// truncated (raft-wal #31), which the SIGKILL test hit.
	w, err := wal.Open(dir, wal.WithSegmentFiler(segment.NewFiler(dir, privateVFS{walfs.New()})),
		wal.WithLogger(newHclog(l.log)), wal.WithSegmentSize(l.cfg.SegmentSize))
	if err != nil {
		return nil, fmt.Errorf("replog: log store %s: %w", dir, err)
	}
	// raft-wal's meta store is made 0644 by bbolt (a pre-made 0600 file
	// makes raft-wal v0.4.2 panic).
	if err := narrowOwn(l.log, dir, "log store files"); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

// narrowOwn makes private what a library has just made under dir with
// its own, wider modes (raft's snapshots, raft-wal's meta store). Those
// modes are expected, so it logs a count at debug level rather than
// diskperm's warning per path (four on every member at every snapshot);
// callers check the places with a warning first or after, so anything
// else found wide is still reported.
func narrowOwn(log *slog.Logger, dir, what string) error {
	n, err := diskperm.Fix(dir, diskperm.Dir, slog.New(slog.DiscardHandler))
	log.Debug("replog: "+what+" made private", "dir", dir, "paths", n)
	return err
}

// privateVFS creates raft-wal's segment files 0600 (it asks for 0644).
type privateVFS struct{ *walfs.FS }

func (v privateVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	f, err := v.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(filepath.Join(dir, name), diskperm.File); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
