package resourcemanager

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/mapreduce"
)

// cleanOutput checks and cleans a job's output path.
func cleanOutput(p string) (string, error) {
	if !strings.HasPrefix(p, "/") {
		return "", status.Errorf(codes.InvalidArgument, "output directory %q: must be an absolute path", p)
	}
	c := path.Clean(p)
	if c == "/" {
		return "", status.Error(codes.InvalidArgument, "output directory /: a job cannot write the root directory")
	}
	return c, nil
}

// fsStatus turns a file system error on p into a gRPC status the job
// client shows as it is.
func fsStatus(op, p string, err error) error {
	code := codes.Unavailable
	switch {
	case errors.Is(err, fs.ErrPermission):
		code = codes.PermissionDenied
	case errors.Is(err, fs.ErrExist):
		code = codes.AlreadyExists
	case errors.Is(err, fs.ErrNotExist):
		code = codes.NotFound
	case errors.Is(err, fs.ErrInvalid):
		code = codes.InvalidArgument
	}
	return status.Errorf(code, "%s %s: %v", op, p, err)
}

// checkOutput refuses an output directory that exists (a job never
// writes into, and so never removes, a directory it did not create) or
// that user may not look at.
func (rm *ResourceManager) checkOutput(ctx context.Context, user, output string) error {
	fsys, err := rm.users.For(user)
	if err != nil {
		return status.Errorf(codes.Unavailable, "file system as %s: %v", user, err)
	}
	_, err = fsys.Stat(ctx, output)
	switch {
	case err == nil:
		return status.Errorf(codes.AlreadyExists, "output directory %s already exists", output)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return fsStatus("output directory", output, err)
}

// userFS is the file system as j's submitter.
func (rm *ResourceManager) userFS(j *job) (mapreduce.FS, error) {
	return rm.users.For(j.user)
}
