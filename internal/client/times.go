package client

import (
	"context"
	"time"

	"smarth/internal/rpc/dfspb"
)

// SetTimes sets the modification and access times of a file or directory;
// a zero time leaves that one as it is (HDFS setTimes with -1). The caller
// needs write access to path; a cluster with access times off refuses an
// access time.
func (f *FileSystem) SetTimes(ctx context.Context, p string, mtime, atime time.Time) error {
	p, err := cleanPath(p)
	if err != nil {
		return err
	}
	req := &dfspb.SetTimesRequest{Path: p, MtimeMs: unixMsOrKeep(mtime), AtimeMs: unixMsOrKeep(atime)}
	if _, err := f.nn.SetTimes(ctx, req); err != nil {
		return mapError("setTimes", p, err)
	}
	return nil
}

// unixMsOrKeep is t in unix ms, or -1 ("keep") for the zero time.
func unixMsOrKeep(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}
