package resourcemanager

import (
	"context"
	"errors"
	"fmt"
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

// reserveJob takes the next job ID for output, refusing an output a
// job still running (or being set up) writes.
func (rm *ResourceManager) reserveJob(output string) (string, int64, error) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for _, j := range rm.order {
		if !j.terminal() && j.output == output {
			return "", 0, status.Errorf(codes.AlreadyExists, "output directory %s is already being written by %s", j.output, j.id)
		}
	}
	if other, ok := rm.reserved[output]; ok {
		return "", 0, status.Errorf(codes.AlreadyExists, "output directory %s is already being written by %s", output, other)
	}
	rm.seq++
	id := fmt.Sprintf("job_%s_%04d", rm.epoch, rm.seq)
	rm.reserved[output] = id
	return id, rm.seq, nil
}

// setupJob creates job id's staging directory as user.
func (rm *ResourceManager) setupJob(ctx context.Context, user, output, id string) error {
	fsys, err := rm.users.For(user)
	if err != nil {
		return status.Errorf(codes.Unavailable, "file system as %s: %v", user, err)
	}
	if err := mapreduce.SetupJob(ctx, fsys, output, id); err != nil {
		return fsStatus("output directory", output, err)
	}
	return nil
}

// commit runs the job's output commit; Config.CommitFS, when set, wraps
// the file system it runs on (tests inject faults between its steps).
func (rm *ResourceManager) commit(ctx context.Context, fsys mapreduce.FS, output, id string, winners []string) error {
	if rm.cfg.CommitFS != nil {
		fsys = rm.cfg.CommitFS(fsys)
	}
	return mapreduce.CommitJob(ctx, fsys, output, id, winners)
}
