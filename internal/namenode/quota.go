package namenode

import (
	"context"
	"strings"

	"smarth/internal/namenode/fsstate"
	"smarth/internal/namenode/namespace"
	"smarth/internal/rpc/dfspb"
)

// setQuota sets or clears a directory's name and space quotas (HDFS
// setQuota, as dfsadmin -setQuota/-setSpaceQuota/-clrQuota/-clrSpaceQuota
// call it). The namespace checks the caller is a superuser.
func (nn *NameNode) setQuota(ctx context.Context, req *dfspb.SetQuotaRequest) error {
	p, err := cleanPath("setQuota", req.GetPath())
	if err != nil {
		return err
	}
	c := callerOf(ctx)
	var op fsstate.Record = &fsstate.SetQuota{Path: p, NSQuota: req.GetNsQuota(), DSQuota: req.GetDsQuota()}
	if typ := req.GetStorageType(); typ != "" {
		// HDFS's setQuota with a StorageType: the name quota must be left
		// alone, ds_quota is the type's.
		if req.GetNsQuota() != namespace.QuotaDontSet {
			return errInvalid("setQuota %s: a storage-type quota leaves the name quota unset (ns_quota %d, want %d)",
				p, req.GetNsQuota(), namespace.QuotaDontSet)
		}
		op = &fsstate.SetTypeQuota{Path: p, StorageType: strings.ToUpper(typ), Quota: req.GetDsQuota()}
	}
	_, err = nn.mutate("setQuota", p, c, op, nil, nil)
	return err
}

// isQuotaError reports whether err is a quota being exceeded, which the
// client must see in HDFS's words rather than wrapped.
func isQuotaError(err error) bool {
	ne, ok := err.(*namespace.Error)
	return ok && ne.Kind == namespace.QuotaExceeded
}

// checkBlockLength refuses a length reported for a block of f that no
// block of f can have: negative, or past f's preferred block size, where
// every writer moves to a new block (HDFS's datanodes refuse to write
// past it). Lengths are what the file's space charge and length are made
// of; a negative one would shrink the charge below the replicas' bytes.
func checkBlockLength(op string, f *namespace.INode, id uint64, n int64) error {
	if n < 0 || n > f.BlockSize() {
		return errInvalid("%s %s: block %d reported with length %d, outside 0..%d (the file's block size)", op, f.Path(), id, n, f.BlockSize())
	}
	return nil
}

// commitForCompleteLocked commits the blocks a complete names at their
// final lengths. It changes the file's space charge outside an edit (the
// complete record logs it later), so it charges the difference itself:
// quota usage must follow the in-memory blocks at all times.
func (nn *NameNode) commitForCompleteLocked(f *namespace.INode, final []*dfspb.ExtendedBlock) error {
	for _, eb := range final {
		if err := checkBlockLength("complete", f, eb.GetBlockId(), eb.GetNumBytes()); err != nil {
			return err
		}
	}
	before := namespace.DiskCharge(f)
	defer func() { nn.state.Tree().ChargeSpace(f, namespace.DiskCharge(f)-before) }()
	for _, eb := range final {
		b := nn.state.Blocks().Get(eb.GetBlockId())
		if b == nil || f.BlockIndex(b.ID) < 0 {
			return errPrecondition("complete %s: block %d is not part of the file", f.Path(), eb.GetBlockId())
		}
		if err := nn.state.Blocks().Commit(b, eb.GetGenerationStamp(), eb.GetNumBytes()); err != nil {
			return errPrecondition("complete %s: %v", f.Path(), err)
		}
	}
	return nil
}
