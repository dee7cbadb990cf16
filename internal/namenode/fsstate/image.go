package fsstate

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/journal"
	"smarth/internal/namenode/namespace"
)

// A file's preferred block size is 48 bits of its inode (namespace.
// MaxBlockSize, HDFS's INodeFile.HeaderFormat), but builds before the
// inode was packed accepted any size and wrote it to images and edits as
// it was. Such a size is loaded as cappedBlockSize, with a warning naming
// the file, its old and its new size, rather than refused:
//   - no data changes: the preferred size only bounds blocks not yet
//     written; every block keeps its own length, stored apart, and 2^48-512
//     bytes (256 TiB) is beyond any block a datanode could hold, so every
//     write the file can take behaves as before (appends, concat's
//     same-or-smaller check, the quota charge of a block being written);
//   - refusing would keep the whole namespace offline over one attribute,
//     with no tool to edit an image but the older build;
//   - nothing is silent: each file is named in the log at every load
//     until a checkpoint stores the capped size.
//
// The cap is a multiple of 512, as every block size a create accepts.
const cappedBlockSize = namespace.MaxBlockSize &^ 511

// logWarn logs a warning of a load.
func (s *State) logWarn(msg string, args ...any) {
	l := s.logger
	if l == nil {
		l = slog.Default()
	}
	l.Warn(msg, args...)
}

// warnCappedBlockSize reports a block size capped on load (see
// cappedBlockSize).
func (s *State) warnCappedBlockSize(from, path string, old int64) {
	s.logWarn("block size of a file from an older build is above 48 bits; capped (no data changes, the next checkpoint keeps the cap)",
		"path", path, "from", from, "block_size", old, "capped_to", int64(cappedBlockSize))
}

// inodeError is an inode record that does not decode, with what of its
// place in the tree was read, so that the load can name its path.
type inodeError struct {
	id, parent uint64
	name       string
	path       string // set by LoadImage once the parent is known
	err        error
}

func (e *inodeError) Error() string {
	if e.path != "" {
		return fmt.Sprintf("inode %d (%s): %v", e.id, e.path, e.err)
	}
	return fmt.Sprintf("inode %d (%q in directory inode %d): %v", e.id, e.name, e.parent, e.err)
}

func (e *inodeError) Unwrap() error { return e.err }

const (
	// imageVersion 2 added the cache records after the inodes, 3 the
	// directories' quotas, 4 extended attributes, 5 storage-type quotas;
	// older images still load.
	imageVersion   = 5
	recImageHeader = 'H'
	recImageINode  = 'I'
)

// Image serialises the state as journal records: what a checkpoint saves
// as of txid. Callers hold the lock that serialises Apply.
func (s *State) Image(txid uint64) *journal.Image {
	im := journal.NewImage(txid)
	s.EachImageRecord(im.Add)
	return im
}

// EachImageRecord calls emit with the header and then every inode, parents
// first. The slice passed to emit is reused afterwards.
func (s *State) EachImageRecord(emit func([]byte)) {
	var e enc
	e.b = append(e.b, recImageHeader)
	e.u(imageVersion)
	e.u(s.tree.LastID())
	e.u(s.blocks.LastID())
	e.u(s.blocks.LastGS())
	e.u(uint64(s.tree.Files() + s.tree.Dirs()))
	emit(e.b)
	s.tree.Walk(func(n *namespace.INode) bool {
		e.b = e.b[:0]
		encodeINode(&e, n)
		emit(e.b)
		return true
	})
	s.cache.eachCacheRecord(&e, emit)
	s.eachFeatureRecord(&e, emit)
	s.eachTokenRecord(&e, emit)
}

func encodeINode(e *enc, n *namespace.INode) {
	e.b = append(e.b, recImageINode)
	e.u(n.ID)
	var parent uint64
	if n.Parent != nil {
		parent = n.Parent.ID
	}
	e.u(parent)
	e.s(n.Name)
	e.bool(n.IsDir())
	e.u(uint64(n.Perm()))
	e.s(n.Owner())
	e.s(n.Group())
	e.i(n.MTime)
	e.i(n.ATime)
	e.u(uint64(len(n.XAttrs())))
	for _, x := range n.XAttrs() {
		e.s(x.Name)
		e.s(string(x.Value))
	}
	if n.IsDir() {
		e.bool(n.Quota() != nil)
		if n.Quota() != nil {
			e.i(n.Quota().NS)
			e.i(n.Quota().DS)
			types := make([]string, 0, len(n.Quota().Types))
			for typ := range n.Quota().Types {
				types = append(types, typ)
			}
			slices.Sort(types) // the same state gives the same image
			e.u(uint64(len(types)))
			for _, typ := range types {
				e.s(typ)
				e.i(n.Quota().Types[typ])
			}
		}
		return
	}
	e.u(uint64(n.Replication()))
	e.i(n.BlockSize())
	e.bool(n.Writer() != nil)
	if n.Writer() != nil {
		e.s(n.Writer().Client)
		e.s(n.Writer().Host)
	}
	e.u(uint64(len(n.Blocks)))
	for _, b := range n.Blocks {
		encRef(e, BlockRef{ID: b.ID, GS: b.GS, Len: b.NumBytes})
		e.u(uint64(b.State))
	}
}

// decodeINode parses an inode record of an image of the given version.
// oldBlockSize is a file's block size as the record holds it when it was
// above MaxBlockSize (the inode has cappedBlockSize), else 0.
func decodeINode(b []byte, version uint64) (parent uint64, n *namespace.INode, blocks []*blockmap.Block, oldBlockSize int64, err error) {
	if len(b) == 0 || b[0] != recImageINode {
		return 0, nil, nil, 0, fmt.Errorf("not an inode record")
	}
	d := &dec{b: b[1:]}
	id := d.u()
	parent = d.u()
	name, dir, perm := d.s(), d.bool(), uint16(d.u())
	owner, group, mtime, atime := d.s(), d.s(), d.i(), d.i()
	if d.err != nil {
		return 0, nil, nil, 0, &inodeError{id: id, parent: parent, name: name, err: d.err}
	}
	if n, err = namespace.NewINode(id, name, dir, perm, owner, group, mtime, atime); err != nil {
		return 0, nil, nil, 0, &inodeError{id: id, parent: parent, name: name, err: err}
	}
	if version >= 4 {
		n.SetXAttrs(decodeXAttrs(d))
	}
	if n.IsDir() && version >= 3 && d.bool() {
		quota := &namespace.Quota{NS: d.i(), DS: d.i()} // usage: RecountQuotas
		n.SetQuota(quota)
		// The type quotas end a directory's record. Snapshot inodes are
		// decoded as the current version whatever image held them, so a
		// version 4 record (no count) is told by nothing left to read.
		if version >= 5 && len(d.b) > 0 {
			count := d.count(2) // name length and quota: a byte each at least
			for i := 0; i < count && d.err == nil; i++ {
				typ, tq := d.s(), d.i()
				if !slices.Contains(namespace.StorageTypes, typ) {
					d.err = fmt.Errorf("unknown storage type %q in a quota", typ)
				}
				if quota.Types == nil {
					quota.Types = map[string]int64{}
				}
				quota.Types[typ] = tq
			}
		}
	}
	if !n.IsDir() {
		repl, bs := d.u(), d.i()
		switch {
		case repl > namespace.MaxReplication: // no build ever allowed above 32767
			d.err = fmt.Errorf("replication %d is above %d", repl, namespace.MaxReplication)
		case bs < 0:
			d.err = fmt.Errorf("negative block size %d", bs)
		case bs > namespace.MaxBlockSize:
			oldBlockSize, bs = bs, cappedBlockSize
		}
		n.SetReplication(int(repl))
		n.SetBlockSize(bs)
		if d.bool() {
			n.SetWriter(&namespace.Writer{Client: d.s(), Host: d.s()})
		}
		count := d.count(4)
		for i := 0; i < count && d.err == nil; i++ {
			ref := decRef(d)
			st := blockmap.State(d.u())
			if st < blockmap.UnderConstruction || st > blockmap.Complete {
				d.err = fmt.Errorf("block %d: bad state %d", ref.ID, st)
			}
			blocks = append(blocks, &blockmap.Block{ID: ref.ID, GS: ref.GS, NumBytes: ref.Len, State: st, FileID: n.ID, Expected: n.Replication()})
		}
	}
	if err := d.done(); err != nil {
		return 0, nil, nil, 0, &inodeError{id: id, parent: parent, name: name, err: err}
	}
	n.Blocks = blocks
	return parent, n, blocks, oldBlockSize, nil
}

// LoadImage implements journal.Loader: it restores an image written by
// Image into an empty state.
func (s *State) LoadImage(txid uint64, recs [][]byte) error {
	if len(recs) == 0 || len(recs[0]) == 0 || recs[0][0] != recImageHeader {
		return fmt.Errorf("image of txid %d has no header", txid)
	}
	d := &dec{b: recs[0][1:]}
	version, lastINode, lastBlock, lastGS, count := d.u(), d.u(), d.u(), d.u(), d.u()
	if err := d.done(); err != nil {
		return fmt.Errorf("image header: %w", err)
	}
	if version < 1 || version > imageVersion {
		return fmt.Errorf("image version %d; this namenode reads versions 1 to %d", version, imageVersion)
	}
	inodes := recs[1:]
	for i, r := range inodes {
		if len(r) == 0 || r[0] != recImageINode {
			inodes = inodes[:i]
			break
		}
	}
	if count != uint64(len(inodes)) {
		return fmt.Errorf("image header says %d inodes, image has %d", count, len(inodes))
	}
	var features [][]byte // ACLs, policies, snapshots: loaded after the inodes
	for _, r := range recs[1+len(inodes):] {
		if len(r) == 0 {
			return fmt.Errorf("empty image record")
		}
		if isFeatureRecord(r) {
			features = append(features, r)
			continue
		}
		if err := s.loadCacheRecord(r); err != nil {
			return err
		}
	}
	// Decoding (and allocating) the inodes runs a batch ahead of linking
	// them into the tree and block map, on another core: a restart of
	// millions of files is then bounded by the slower of the two halves
	// rather than by their sum.
	type decoded struct {
		parent       uint64
		n            *namespace.INode
		blocks       []*blockmap.Block
		oldBlockSize int64
	}
	const batch = 4096
	batches := make(chan []decoded, 4)
	stop := make(chan struct{})
	defer close(stop)
	var decErr error // set before batches is closed
	go func() {
		defer close(batches)
		for start := 0; start < len(inodes); start += batch {
			out := make([]decoded, 0, min(batch, len(inodes)-start))
			for _, r := range inodes[start:min(start+batch, len(inodes))] {
				parent, n, blocks, oldBS, err := decodeINode(r, version)
				if err != nil {
					// What decoded before it is linked, so that the
					// error can name the bad inode's path.
					decErr = err
					select {
					case batches <- out:
					case <-stop:
					}
					return
				}
				out = append(out, decoded{parent, n, blocks, oldBS})
			}
			select {
			case batches <- out:
			case <-stop:
				return
			}
		}
	}()
	for ds := range batches {
		for _, d := range ds {
			if err := s.tree.Restore(d.parent, d.n); err != nil {
				return err
			}
			if d.oldBlockSize != 0 {
				s.warnCappedBlockSize(fmt.Sprintf("image of txid %d", txid), d.n.Path(), d.oldBlockSize)
			}
			for _, b := range d.blocks {
				if s.blocks.Get(b.ID) != nil {
					return fmt.Errorf("block %d belongs to two files", b.ID)
				}
				s.blocks.Add(b)
			}
		}
	}
	if decErr != nil {
		var ie *inodeError
		if errors.As(decErr, &ie) {
			if p := s.tree.ByID(ie.parent); p != nil && p.IsDir() {
				ie.path = strings.TrimSuffix(p.Path(), "/") + "/" + ie.name
			}
		}
		return decErr
	}
	if err := s.loadFeatureRecords(features); err != nil {
		return err
	}
	s.tree.SetLastID(lastINode)
	s.blocks.Observe(lastBlock, lastGS)
	s.tree.RecountQuotas()
	return nil
}

// decodeXAttrs reads an inode's extended attributes (image version 4).
func decodeXAttrs(d *dec) []namespace.XAttr {
	count := d.count(2)
	var xs []namespace.XAttr
	for i := 0; i < count && d.err == nil; i++ {
		x := namespace.XAttr{Name: d.s()}
		if v := d.s(); v != "" {
			x.Value = []byte(v)
		}
		if len(xs) > 0 && xs[len(xs)-1].Name >= x.Name {
			d.err = fmt.Errorf("xattr %q out of order", x.Name) // the tree keeps them sorted
		}
		xs = append(xs, x)
	}
	return xs
}
