package client

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestMapError(t *testing.T) {
	cases := []struct {
		op, path string
		err      error
		kind     error
		msg      string
	}{
		{"open", "/a/b", status.Error(codes.NotFound, "/a/b: does not exist"), fs.ErrNotExist, "open /a/b: no such file or directory"},
		{"create", "/x", status.Error(codes.AlreadyExists, "create /x: file exists"), fs.ErrExist, "create /x: file exists"},
		{"rm", "/d", status.Error(codes.FailedPrecondition, "delete /d: directory is not empty (4 entries)"), ErrNotEmpty, "rm /d: directory is not empty (4 entries)"},
		{"mkdir", "/f/x", status.Error(codes.FailedPrecondition, "mkdir /f/x: /f is not a directory"), ErrNotDir, "mkdir /f/x: /f is not a directory"},
		{"open", "/d", status.Error(codes.FailedPrecondition, "/d is a directory"), ErrIsDir, "open /d: /d is a directory"},
		{"create", "/f", status.Error(codes.FailedPrecondition, "lease held by another client"), ErrLease, "create /f: lease held by another client"},
		{"mkdir", "/a:b", status.Error(codes.InvalidArgument, `invalid name "a:b"`), fs.ErrInvalid, `mkdir /a:b: invalid name "a:b"`},
		{"ls", "/p", status.Error(codes.PermissionDenied, "permission denied: user=u, access=READ"), fs.ErrPermission, "ls /p: permission denied: user=u, access=READ"},
		{"write", "/f", status.Error(codes.ResourceExhausted, "could only be written to 0 of the 1 required datanodes"), ErrNoDatanodes, "write /f: could only be written to 0 of the 1 required datanodes"},
		{"mkdir", "/m", status.Error(codes.Unavailable, "namenode is in safe mode: 1 of 2 blocks reported"), ErrUnavailable, "mkdir /m: namenode is in safe mode: 1 of 2 blocks reported"},
		{"stat", "/s", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), context.DeadlineExceeded, "stat /s: namenode did not answer in time"},
	}
	for _, c := range cases {
		err := mapError(c.op, c.path, c.err)
		if !errors.Is(err, c.kind) || err.Error() != c.msg {
			t.Errorf("mapError(%s %s, %v) = %q (kind ok: %v), want %q", c.op, c.path, c.err, err, errors.Is(err, c.kind), c.msg)
		}
	}
	if mapError("x", "/y", nil) != nil {
		t.Fatal("nil error mapped to non-nil")
	}
}
