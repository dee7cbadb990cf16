package namenode

import (
	"fmt"

	"smarth/internal/namenode/blockmap"
	"smarth/internal/namenode/namespace"
)

// Edit records of the attribute operations added after the cache ones
// (times, quotas, extended attributes), and the space accounting of block
// operations. They live here so that ops.go keeps
// the original, hot-path records readable.

// opSetTypeQuota sets or clears one storage-type quota (path, type,
// quota); a kind of its own, numbered apart from the other blocks, so that
// setQuota records of older journals decode unchanged.
const opSetTypeQuota opKind = 80

func init() { opNames[opSetTypeQuota] = "setTypeQuota" }

func isAttrOp(k opKind) bool {
	return k >= opSetTimes && k <= opRemoveXAttr || k == opSetTypeQuota
}

func encodeAttrOp(e *enc, o *editOp) {
	switch o.Kind {
	case opSetTimes:
		e.s(o.Path)
		e.i(o.MTime)
		e.i(o.ATime)
	case opSetQuota:
		e.s(o.Path)
		e.i(o.NSQuota)
		e.i(o.DSQuota)
	case opSetTypeQuota:
		e.s(o.Path)
		e.s(o.StorageType)
		e.i(o.DSQuota)
	case opSetXAttr:
		e.s(o.Path)
		e.s(o.XAttr.Name)
		e.s(string(o.XAttr.Value))
		e.u(uint64(o.XAttrFlags))
	case opRemoveXAttr:
		e.s(o.Path)
		e.s(o.XAttr.Name)
	}
}

func decodeAttrOp(d *dec, o *editOp) {
	switch o.Kind {
	case opSetTimes:
		o.Path, o.MTime, o.ATime = d.s(), d.i(), d.i()
	case opSetQuota:
		o.Path, o.NSQuota, o.DSQuota = d.s(), d.i(), d.i()
	case opSetTypeQuota:
		o.Path, o.StorageType, o.DSQuota = d.s(), d.s(), d.i()
	case opSetXAttr:
		o.Path, o.XAttr.Name = d.s(), d.s()
		if v := d.s(); v != "" {
			o.XAttr.Value = []byte(v)
		}
		o.XAttrFlags = namespace.XAttrFlag(d.u())
	case opRemoveXAttr:
		o.Path, o.XAttr.Name = d.s(), d.s()
	}
}

func (s *fsState) applyAttrOp(o *editOp, c namespace.Caller) (applied, error) {
	var res applied
	var err error
	switch o.Kind {
	case opSetTimes:
		res.file, err = s.tree.SetTimes(c, o.Path, o.MTime, o.ATime)
	case opSetQuota:
		err = s.tree.SetQuota(c, o.Path, o.NSQuota, o.DSQuota)
	case opSetTypeQuota:
		err = s.tree.SetTypeQuota(c, o.Path, o.StorageType, o.DSQuota)
	case opSetXAttr:
		err = s.tree.SetXAttr(c, o.Path, o.XAttr.Name, o.XAttr.Value, o.XAttrFlags)
	case opRemoveXAttr:
		err = s.tree.RemoveXAttr(c, o.Path, o.XAttr.Name)
	default:
		err = fmt.Errorf("unknown attribute op %d", o.Kind)
	}
	return res, err
}

// blockOpFile is the file whose blocks op changes, or nil.
func (s *fsState) blockOpFile(o *editOp) *namespace.INode {
	var id uint64
	switch o.Kind {
	case opAddBlock, opComplete, opAbandonBlock, opCommitSync, opCloseFile:
		id = o.FileID
	case opUpdateBlock:
		if b := s.blocks.Get(o.Block.ID); b != nil {
			id = b.FileID
		}
	default:
		return nil
	}
	if f := s.tree.ByID(id); f != nil && !f.IsDir() {
		return f
	}
	return nil
}

// addBlockCharge is how much an addBlock adds to its file's space charge:
// a whole new block being written, less what committing the previous one
// at its real length gives back (HDFS commits it, then checks).
// Saturated, as DiskCharge (see namespace.Space).
func addBlockCharge(f *namespace.INode, prev *blockRef, blocks *blockmap.Map) int64 {
	full := namespace.Space(f.BlockSize(), f.Replication())
	delta := full
	if prev != nil {
		if b := blocks.Get(prev.ID); b != nil && b.State == blockmap.UnderConstruction {
			delta = namespace.AddSpace(delta, namespace.Space(max(prev.Len, 0), f.Replication())-full)
		}
	}
	return delta
}
