package client

import (
	"context"
	"math"

	"smarth/internal/rpc/dfspb"
)

// Quota arguments of SetQuota, as HDFS's HdfsConstants.
const (
	QuotaReset   int64 = -1            // clear the quota
	QuotaDontSet int64 = math.MaxInt64 // leave it as it is
)

// SetQuota sets a directory's name quota (inodes, the directory
// included) and space quota (bytes times replication); QuotaReset clears
// one, QuotaDontSet leaves it. Only a superuser may.
func (f *FileSystem) SetQuota(ctx context.Context, p string, ns, ds int64) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	if _, err := f.nn.SetQuota(ctx, &dfspb.SetQuotaRequest{Path: p, NsQuota: ns, DsQuota: ds}); err != nil {
		return mapError("setQuota", p, err)
	}
	return nil
}
