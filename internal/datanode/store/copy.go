package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"smarth/internal/datanode/store/vfs"
	"smarth/internal/diskperm"
)

// CopyRecovery ends copy-on-truncate recovery of a replica (HDFS's
// FsDatasetImpl.copyReplicaWithNewBlockIdAndGS): a truncate cut inside a
// block a snapshot still holds, so the namenode gave the cut block a new
// id. The first newLength bytes of replica id (finalized at stamp gs,
// under recovery recoveryID) are copied into a new finalized replica
// newID at stamp recoveryID, with their checksums; the last chunk, if the
// cut falls inside it, is verified against the source's checksum first
// and then checksummed afresh over the bytes kept. The source replica is
// not changed: the snapshot reads it.
//
// The copy is written in tmp/ and renamed into finalized/ (meta file
// first, as a finalize does), so a crash leaves either no new replica or
// a whole one. A replica of newID left by an earlier attempt that did not
// reach the namenode is replaced.
func (s *Store) CopyRecovery(id, gs, recoveryID, newID uint64, newLength int64) (Replica, error) {
	name := BlockName(id, gs)
	if newID == id {
		return Replica{}, fmt.Errorf("copy of %s: the new block id is the same", name)
	}
	r, err := s.lockIdle(id)
	if err != nil {
		return Replica{}, err
	}
	switch {
	case r.GS != gs:
		err = fmt.Errorf("%w: copy of %s: the replica here has stamp %d", ErrNotFound, name, r.GS)
	case r.State != Finalized:
		err = fmt.Errorf("copy of %s: the replica is %s, not finalized", name, r.State)
	case r.Corrupt:
		err = fmt.Errorf("%w: copy of %s: the replica is marked corrupt", ErrCorrupt, name)
	case r.recoveryID != recoveryID:
		err = fmt.Errorf("copy of %s: recovery id %d, replica is under recovery %d", name, recoveryID, r.recoveryID)
	case newLength <= 0 || r.Length < newLength:
		err = fmt.Errorf("copy of %s: new length %d, the replica has %d bytes", name, newLength, r.Length)
	case s.copying[newID]:
		err = fmt.Errorf("copy of %s into %s is already in progress", name, BlockName(newID, recoveryID))
	}
	if err != nil {
		s.mu.Unlock()
		return Replica{}, err
	}
	srcData, srcMeta, bpc, vol := r.dataPath(), r.metaPath(), r.BytesPerChecksum, r.vol
	if s.copying == nil {
		s.copying = map[uint64]bool{}
	}
	s.copying[newID] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.copying, newID)
		s.mu.Unlock()
	}()

	nr := &replica{Replica: Replica{BlockID: newID, GS: recoveryID, Length: newLength, Visible: newLength,
		State: Finalized, BytesPerChecksum: bpc}, vol: vol, dir: vol.tmp}
	if err := copyPrefix(s.fs, srcData, srcMeta, nr.dataPath(), nr.metaPath(), newLength, bpc, s.opts.SyncOnClose); err != nil {
		_ = s.fs.Remove(nr.dataPath())
		_ = s.fs.Remove(nr.metaPath())
		return Replica{}, fmt.Errorf("copy of %s into %s: %w", name, nr.Name(), err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.replicas[newID]; ok {
		if old.writer != nil || old.State != Finalized {
			_ = s.fs.Remove(nr.dataPath())
			_ = s.fs.Remove(nr.metaPath())
			return Replica{}, fmt.Errorf("%w: copy of %s: %s is %s here", ErrExists, name, old.Name(), old.State)
		}
		if err := s.removeLocked(old); err != nil {
			return Replica{}, fmt.Errorf("copy of %s: replacing an earlier copy %s: %w", name, old.Name(), err)
		}
	}
	if err := s.moveLocked(nr, vol.finalized); err != nil {
		_ = s.fs.Remove(nr.dataPath())
		_ = s.fs.Remove(nr.metaPath())
		return Replica{}, fmt.Errorf("copy of %s into %s: %w", name, nr.Name(), err)
	}
	s.replicas[newID] = nr
	if s.opts.SyncOnClose {
		if err := syncDir(s.fs, vol.finalized); err != nil {
			return nr.Replica, fmt.Errorf("copy of %s: sync %s: %w", name, vol.finalized, err)
		}
	}
	return nr.Replica, nil
}

// copyPrefix writes the first n bytes of a replica (data and meta files)
// to dstData and dstMeta. A partial last chunk is checked against the
// source's checksum of the whole chunk before its own is computed, so a
// corrupt source is not blessed with a fresh checksum.
func copyPrefix(fs vfs.FS, srcData, srcMeta, dstData, dstMeta string, n int64, bpc int, sync bool) error {
	sd, err := fs.Open(srcData)
	if err != nil {
		return err
	}
	defer sd.Close()
	sm, err := fs.Open(srcMeta)
	if err != nil {
		return err
	}
	defer sm.Close()
	if got, err := readMetaHeader(sm); err != nil {
		return err
	} else if got != bpc {
		return fmt.Errorf("meta file %s: %d bytes per checksum, replica has %d", srcMeta, got, bpc)
	}
	partial := n % int64(bpc)
	var lastSum []byte
	if partial != 0 {
		// The source's whole chunk holding the cut, and its checksum.
		start := n - partial
		chunk := make([]byte, bpc)
		k, err := sd.ReadAt(chunk, start)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		chunk = chunk[:k]
		if int64(k) < partial {
			return fmt.Errorf("block file %s: %d bytes at %d, need %d", srcData, k, start, partial)
		}
		var want [checksumSize]byte
		if _, err := sm.ReadAt(want[:], MetaHeaderLen+(start/int64(bpc))*checksumSize); err != nil {
			return fmt.Errorf("meta file %s: checksum of chunk %d: %w", srcMeta, start/int64(bpc), err)
		}
		if crc32.Checksum(chunk, castagnoli) != binary.BigEndian.Uint32(want[:]) {
			return fmt.Errorf("%w: block file %s: checksum mismatch in the chunk at %d, which the new length %d cuts", ErrCorrupt, srcData, start, n)
		}
		lastSum = binary.BigEndian.AppendUint32(nil, crc32.Checksum(chunk[:partial], castagnoli))
	}
	write := func(dst string, from io.Reader, size int64, tail []byte) error {
		f, err := fs.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, diskperm.File)
		if err != nil {
			return err
		}
		_, err = io.CopyN(f, from, size)
		if err == nil && tail != nil {
			_, err = f.Write(tail)
		}
		if err == nil && sync {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	if err := write(dstData, io.NewSectionReader(sd, 0, n), n, nil); err != nil {
		return err
	}
	// Header and the checksums of the whole chunks kept, then the new
	// checksum of the cut chunk.
	full := MetaHeaderLen + (n/int64(bpc))*checksumSize
	return write(dstMeta, io.NewSectionReader(sm, 0, full), full, lastSum)
}
