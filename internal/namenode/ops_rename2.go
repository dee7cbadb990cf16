package namenode

import (
	"context"

	"smarth/internal/namenode/namespace"
)

// rename2 (HDFS's rename with Options.Rename): one edit record, so a
// rename with OVERWRITE replaces its destination atomically, live and on
// replay. Numbered apart from the other blocks of kinds (ops.go from 1,
// ops_features.go from 48) so that records added there never collide.
const opRename2 opKind = 72

func init() { opNames[opRename2] = "rename2" }

func encodeRename2(e *enc, o *editOp) {
	e.s(o.Path)
	e.s(o.Dst)
	e.bool(o.Overwrite)
	e.i(o.Now)
}

func decodeRename2(d *dec, o *editOp) {
	o.Path, o.Dst, o.Overwrite, o.Now = d.s(), d.s(), d.bool(), d.i()
}

func (s *fsState) applyRename2(o *editOp, c namespace.Caller) (applied, error) {
	var res applied
	var err error
	res.path, res.removed, err = s.tree.Rename2(c, o.Path, o.Dst, o.Overwrite, o.Now)
	res.dropped = s.dropFiles(res.removed)
	return res, err
}

// rename2 serves a RenameRequest with rename2 set.
func (nn *NameNode) rename2(ctx context.Context, src, dst string, overwrite bool) error {
	c := callerOf(ctx)
	op := &editOp{Kind: opRename2, Path: src, Dst: dst, Overwrite: overwrite, User: c.User}
	_, err := nn.mutate("rename", src, c, op, nil, nil)
	return err
}
