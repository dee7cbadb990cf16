package namenode

import (
	"fmt"

	"smarth/internal/namenode/namespace"
)

// Edit records of the attribute operations added after the cache ones
// (times; later quotas and the like). They live here so that ops.go keeps
// the original, hot-path records readable.

func isAttrOp(k opKind) bool { return k == opSetTimes }

func encodeAttrOp(e *enc, o *editOp) {
	switch o.Kind {
	case opSetTimes:
		e.s(o.Path)
		e.i(o.MTime)
		e.i(o.ATime)
	}
}

func decodeAttrOp(d *dec, o *editOp) {
	switch o.Kind {
	case opSetTimes:
		o.Path, o.MTime, o.ATime = d.s(), d.i(), d.i()
	}
}

func (s *fsState) applyAttrOp(o *editOp, c namespace.Caller) (applied, error) {
	var res applied
	var err error
	switch o.Kind {
	case opSetTimes:
		res.file, err = s.tree.SetTimes(c, o.Path, o.MTime, o.ATime)
	default:
		err = fmt.Errorf("unknown attribute op %d", o.Kind)
	}
	return res, err
}
