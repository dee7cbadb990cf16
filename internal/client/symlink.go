package client

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/rpc/dfspb"
)

// CreateSymlink asks for a symbolic link at link pointing to target. The
// namespace has no symlinks (HDFS disables them by default), so this
// always fails with an error wrapping errors.ErrUnsupported and saying
// "Symlinks not supported", as HDFS's does.
func (f *FileSystem) CreateSymlink(ctx context.Context, target, link string, createParent bool) error {
	link, err := cleanPath(link)
	if err != nil {
		return err
	}
	_, err = f.nn.CreateSymlink(ctx, &dfspb.CreateSymlinkRequest{Target: target, Link: link, CreateParent: createParent})
	if err == nil {
		return nil
	}
	if st, ok := status.FromError(err); ok && st.Code() == codes.Unimplemented {
		return &PathError{Op: "createSymlink", Path: link, Kind: errors.ErrUnsupported, Msg: "Symlinks not supported"}
	}
	return mapError("createSymlink", link, err)
}
