package fsshell

import (
	"errors"
	"io/fs"
	"strings"

	"smarth/internal/client"
)

// Error is a failed command on a path, worded as `hdfs dfs` words it:
// "put: `/x': File exists", "mv: `/no/dir/x': No such file or directory",
// "chmod: `/x': Permission denied: ...". Scripts that grep HDFS's messages
// find the same words here; errors.Is still sees the client's sentinels.
type Error struct {
	Cmd  string
	Path string
	Err  error
	// Qualified, when set, is the path again as a full URI, said after
	// the message as HDFS says it for a missing destination.
	Qualified string
}

func (e *Error) Error() string {
	p := e.Path
	var pe *client.PathError
	if errors.As(e.Err, &pe) && p == "" {
		p = pe.Path
	}
	msg := hdfsMessage(e.Err)
	if e.Qualified != "" {
		msg += ": `" + e.Qualified + "'"
	}
	if p == "" {
		return e.Cmd + ": " + msg
	}
	return e.Cmd + ": `" + p + "': " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// notDirTarget is the error for several sources whose destination is not
// a directory (statErr: what its stat said), in hdfs dfs's words: "No such
// file or directory" when it is missing, else "Is not a directory".
func notDirTarget(cmd, p string, statErr error) error {
	switch {
	case statErr == nil:
		return fail(cmd, p, client.ErrNotDir)
	case errors.Is(statErr, fs.ErrNotExist):
		return fail(cmd, p, fs.ErrNotExist)
	}
	return fail(cmd, p, statErr)
}

func fail(cmd, p string, err error) error {
	if err == nil {
		return nil
	}
	var se *Error
	if errors.As(err, &se) {
		return err
	}
	return &Error{Cmd: cmd, Path: p, Err: err}
}

// hdfsWords are HDFS's texts for the kinds of failure, with the lower-case
// words our client and the OS use for the same kind.
var hdfsWords = []struct {
	kind  error
	hdfs  string
	plain string
}{
	{fs.ErrNotExist, "No such file or directory", "no such file or directory"},
	{fs.ErrExist, "File exists", "file exists"},
	{client.ErrIsDir, "Is a directory", "is a directory"},
	// HDFS's shell says PathIsNotDirectoryException's words.
	{client.ErrNotDir, "Is not a directory", "not a directory"},
	{client.ErrNotEmpty, "Directory is not empty", "directory not empty"},
	{fs.ErrPermission, "Permission denied", "permission denied"},
}

// hdfsMessage words err as HDFS does: the kind's HDFS text, then any
// detail our side added ("Permission denied: only the owner ...").
func hdfsMessage(err error) string {
	msg := err.Error()
	var pe *client.PathError
	if errors.As(err, &pe) && pe.Msg != "" {
		msg = pe.Msg
	}
	for _, w := range hdfsWords {
		if !errors.Is(err, w.kind) {
			continue
		}
		detail := ""
		lower := strings.ToLower(msg)
		switch {
		case strings.HasPrefix(lower, w.kind.Error()):
			detail = msg[len(w.kind.Error()):] // fmt.Errorf("%w: detail", kind)
		case strings.HasPrefix(lower, w.plain):
			detail = msg[len(w.plain):]
		case w.kind == fs.ErrPermission:
			detail = msg // who may do what: worth keeping
		}
		// Otherwise the namenode's own sentence for a plain kind says no
		// more than HDFS's word (and may name the path a second time).
		detail = strings.TrimLeft(detail, ": ")
		if detail == "" {
			return w.hdfs
		}
		return w.hdfs + ": " + detail
	}
	return msg
}
