package replog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"smarth/internal/diskperm"
)

// fsm is the Log seen by raft: it decodes batches, skips the records
// this node's caller applied as leader, and hands the rest to the
// caller's FSM. raft calls Apply, Snapshot and Restore from one
// goroutine, in log order.
type fsm Log

var errSnapshotAhead = errors.New("replog: the state holds appended records not yet committed (leader under load); snapshot postponed")

func (f *fsm) Apply(e *raft.Log) any {
	l := (*Log)(f)
	if e.Type != raft.LogCommand {
		return nil
	}
	b, err := decodeBatch(e.Data)
	l.mu.Lock()
	if l.err != nil {
		l.mu.Unlock()
		return l.err
	}
	if err == nil && l.token != 0 && b.token != l.token {
		// Another leader's entry committed while this stint's token
		// is set: the stint is over, though raft's notice of it
		// (watchLeadership) may come later. It ends here first, so
		// that memory ahead of the log (records appended, not seen
		// committed) is never built on: the new leader's records go
		// to the caller only if the stint's were all committed.
		// Before, a deposed active resumed after SIGSTOP applied the
		// new leader's records to its diverged memory until the
		// notice came ("complete: ... is not open for writing").
		l.loseLocked(e.Term)
	}
	if err == nil && b.first != l.applied+1 {
		err = fmt.Errorf("replog: entry %d starts at txid %d, but txid %d was the last applied", e.Index, b.first, l.applied)
	}
	if err != nil {
		l.stopLocked(fmt.Errorf("replog: raft entry %d (term %d): %w", e.Index, e.Term, err))
		l.mu.Unlock()
		return l.err
	}
	l.applied = b.first + uint64(len(b.recs)) - 1
	if l.token == 0 && !l.diverged {
		l.lastTxID = l.applied
	}
	skip := l.diverged || (b.token != 0 && b.token == l.skipTok)
	l.mu.Unlock()
	if skip {
		return nil
	}
	for i, rec := range b.recs {
		if err := l.cfg.FSM.Apply(b.first+uint64(i), rec); err != nil {
			l.mu.Lock()
			l.stopLocked(fmt.Errorf("replog: apply txid %d (raft entry %d): %w", b.first+uint64(i), e.Index, err))
			l.mu.Unlock()
			return err
		}
	}
	return nil
}

// Snapshot asks the caller for its state. raft labels the snapshot with
// the last applied entry, so the state must be exactly at its txid: on a
// follower it always is; on a leader whose caller has appended records
// not yet committed it is ahead, and the snapshot is refused (raft tries
// again at the next interval; see the package doc).
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	l := (*Log)(f)
	l.mu.Lock()
	applied, bad := l.applied, l.diverged || l.err != nil
	l.mu.Unlock()
	if bad {
		return nil, ErrDiverged
	}
	txid, w, err := l.cfg.FSM.Snapshot()
	if err != nil {
		return nil, err
	}
	if txid != applied {
		return nil, fmt.Errorf("%w (state at txid %d, log applied to %d)", errSnapshotAhead, txid, applied)
	}
	return &fsmSnapshot{txid: txid, w: w}, nil
}

// snapshotMagic opens every snapshot: the format and the txid of the
// caller's state, which Restore hands back.
var snapshotMagic = []byte("smarth-replog-1\n")

type fsmSnapshot struct {
	txid uint64
	w    io.WriterTo
}

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	hdr := binary.BigEndian.AppendUint64(append([]byte{}, snapshotMagic...), s.txid)
	if _, err := sink.Write(hdr); err != nil {
		sink.Cancel()
		return err
	}
	if _, err := s.w.WriteTo(sink); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

func (f *fsm) Restore(rc io.ReadCloser) error {
	l := (*Log)(f)
	defer rc.Close()
	hdr := make([]byte, len(snapshotMagic)+8)
	if _, err := io.ReadFull(rc, hdr); err != nil {
		return fmt.Errorf("replog: snapshot header: %w", err)
	}
	if string(hdr[:len(snapshotMagic)]) != string(snapshotMagic) {
		return fmt.Errorf("replog: snapshot does not start with %q", snapshotMagic)
	}
	txid := binary.BigEndian.Uint64(hdr[len(snapshotMagic):])
	l.mu.Lock()
	if l.diverged {
		l.mu.Unlock()
		return ErrDiverged
	}
	l.mu.Unlock()
	if err := l.cfg.FSM.Restore(txid, rc); err != nil {
		return fmt.Errorf("replog: restore snapshot at txid %d: %w", txid, err)
	}
	l.mu.Lock()
	l.applied, l.lastTxID = txid, txid
	l.mu.Unlock()
	return nil
}

// privateSnaps narrows each new snapshot's directory and files to the
// private modes once it is complete (raft's file store makes them 0755
// and 0644 under our 0700 directory).
type privateSnaps struct {
	raft.SnapshotStore
	dir string
	log *slog.Logger
}

func (p privateSnaps) Create(version raft.SnapshotVersion, index, term uint64, c raft.Configuration, ci uint64, t raft.Transport) (raft.SnapshotSink, error) {
	s, err := p.SnapshotStore.Create(version, index, term, c, ci, t)
	if err != nil {
		return nil, err
	}
	return privateSink{s, p}, nil
}

type privateSink struct {
	raft.SnapshotSink
	p privateSnaps
}

func (s privateSink) Close() error {
	if err := s.SnapshotSink.Close(); err != nil {
		return err
	}
	// The snapshot raft just wrote, quietly; then the rest of the
	// directory, with a warning for anything found wide there.
	if err := narrowOwn(s.p.log, filepath.Join(s.p.dir, "snapshots", s.ID()), "snapshot files"); err != nil {
		return err
	}
	_, err := diskperm.Fix(s.p.dir, diskperm.Dir, s.p.log)
	return err
}

// newHclog routes raft's logs into the daemon's slog logger.
func newHclog(l *slog.Logger) hclog.Logger {
	return hclog.FromStandardLogger(slog.NewLogLogger(l.Handler(), slog.LevelInfo), &hclog.LoggerOptions{Name: "raft", Level: hclog.Info})
}
