package fsshell

import (
	"context"
	"errors"
	"io/fs"

	"smarth/internal/client"
	"smarth/internal/pathglob"
)

// shellNamespace matches patterns against the client's namespace.
type shellNamespace struct{ fs *client.FileSystem }

func (n shellNamespace) Names(ctx context.Context, dir string) ([]string, error) {
	ents, err := n.fs.List(ctx, dir)
	if err != nil {
		if gone(err) {
			return nil, nil
		}
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Path == dir {
			continue // dir is a file: List gave the file itself
		}
		names = append(names, e.Name)
	}
	return names, nil
}

func (n shellNamespace) Exists(ctx context.Context, p string) (bool, error) {
	if _, err := n.fs.Stat(ctx, p); err != nil {
		if gone(err) {
			return false, nil
		}
		return false, err
	}
	return true, nil
}

// glob expands an absolute pattern against the namespace (see pathglob):
// results are sorted and each exists.
func (s *Shell) glob(ctx context.Context, pattern string) ([]string, error) {
	out, err := pathglob.Expand(ctx, shellNamespace{s.FS}, pattern)
	var bad *pathglob.BadPatternError
	if errors.As(err, &bad) {
		return nil, &client.PathError{Op: "glob", Path: bad.Pattern, Kind: fs.ErrInvalid, Msg: err.Error()}
	}
	return out, err
}

// gone says a path (or a parent) does not exist or is no directory: the
// glob simply has no match there.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, client.ErrNotDir)
}
