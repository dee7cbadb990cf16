package client

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors beyond the io/fs ones. Errors returned by FileSystem wrap
// one of these or fs.ErrNotExist, fs.ErrExist, fs.ErrPermission,
// fs.ErrInvalid, so callers test them with errors.Is.
var (
	ErrNotEmpty    = errors.New("directory not empty")
	ErrNotDir      = errors.New("not a directory")
	ErrIsDir       = errors.New("is a directory")
	ErrNoDatanodes = errors.New("not enough live datanodes")
	ErrUnavailable = errors.New("namenode unavailable")
	ErrLease       = errors.New("file is being written by another client")
	ErrCorrupt     = errors.New("no healthy replica")
	ErrClosed      = errors.New("file already closed")
	// ErrQuotaExceeded is HDFS's NSQuotaExceededException,
	// DSQuotaExceededException or QuotaByStorageTypeExceededException;
	// the message is HDFS's.
	ErrQuotaExceeded = errors.New("quota exceeded")
)

// PathError is an operation on a path that failed. Its message reads like
// the operating system's: "open /a/b: no such file or directory".
type PathError struct {
	Op   string
	Path string
	Kind error  // a sentinel: fs.ErrNotExist, ErrNotEmpty, ... or nil
	Msg  string // what went wrong, for a person
}

func (e *PathError) Error() string {
	msg := e.Msg
	if msg == "" && e.Kind != nil {
		msg = e.Kind.Error()
	}
	if e.Path == "" {
		return e.Op + ": " + msg
	}
	return e.Op + " " + e.Path + ": " + msg
}

func (e *PathError) Unwrap() error { return e.Kind }

// kindText is the message used for a kind when the namenode's own words add
// nothing a person needs.
var kindText = map[error]string{
	fs.ErrNotExist: "no such file or directory",
	fs.ErrExist:    "file exists",
	ErrNotEmpty:    "directory not empty",
	ErrIsDir:       "is a directory",
}

// mapError turns an RPC error into a *PathError for op on path. gRPC codes
// follow the table at the top of dfs.proto; the status text (never the
// "rpc error: code = ..." wrapping) becomes the message.
func mapError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &PathError{Op: op, Path: path, Kind: err, Msg: err.Error()}
	}
	st, ok := status.FromError(err)
	if !ok {
		return &PathError{Op: op, Path: path, Kind: err, Msg: err.Error()}
	}
	msg := trimPrefix(st.Message(), op, path)
	var kind error
	switch st.Code() {
	case codes.NotFound:
		kind = fs.ErrNotExist
	case codes.AlreadyExists:
		kind = fs.ErrExist
	case codes.PermissionDenied:
		kind = fs.ErrPermission
	case codes.InvalidArgument:
		kind = fs.ErrInvalid
	case codes.ResourceExhausted:
		kind = ErrNoDatanodes
	case codes.Unavailable:
		kind = ErrUnavailable
	case codes.DeadlineExceeded:
		kind = context.DeadlineExceeded
		msg = "namenode did not answer in time"
	case codes.Canceled:
		kind = context.Canceled
	case codes.FailedPrecondition:
		kind = preconditionKind(msg)
	}
	if t, ok := kindText[kind]; ok && (msg == "" || kind == fs.ErrNotExist || kind == fs.ErrExist) {
		msg = t
	}
	if msg == "" && kind != nil {
		msg = kind.Error()
	}
	return &PathError{Op: op, Path: path, Kind: kind, Msg: msg}
}

// preconditionKind sorts FailedPrecondition by its text: the code alone
// covers several cases (see dfs.proto).
func preconditionKind(msg string) error {
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, " quota") && strings.Contains(m, "is exceeded"):
		return ErrQuotaExceeded
	case strings.Contains(m, "not empty"):
		return ErrNotEmpty
	case strings.Contains(m, "is not a directory"), strings.Contains(m, "not a directory"):
		return ErrNotDir
	case strings.Contains(m, "is a directory"):
		return ErrIsDir
	case strings.Contains(m, "lease"), strings.Contains(m, "being written"), strings.Contains(m, "under construction"):
		return ErrLease
	}
	return nil
}

// trimPrefix drops a leading "path: " or "<its own op> path: " that the
// namenode may already have put in its message, so the path is not said
// twice under two names ("rm /x: delete /x: ...").
func trimPrefix(msg, op, path string) string {
	if path == "" {
		return msg
	}
	if strings.HasPrefix(msg, path+": ") {
		return msg[len(path)+2:]
	}
	if i := strings.Index(msg, " "+path+": "); i > 0 && !strings.Contains(msg[:i], " ") {
		return msg[i+len(path)+3:]
	}
	return msg
}
