package fsshell

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"smarth/internal/client"
)

// FindOptions is a find expression: every given test must hold.
type FindOptions struct {
	Name   string // -name: glob on the last path component
	IName  string // -iname: the same, ignoring case
	Type   byte   // -type: 'f' or 'd'; 0 any
	Print0 bool   // -print0: NUL after each path instead of a newline
}

// Find prints every path at or under args that matches o, depth first.
func (s *Shell) Find(ctx context.Context, args []string, o FindOptions) error {
	for _, pat := range []string{o.Name, o.IName} {
		if _, err := path.Match(pat, ""); err != nil {
			return fail("find", "", fmt.Errorf("%w: bad pattern %q", fs.ErrInvalid, pat))
		}
	}
	if len(args) == 0 {
		args = []string{"."}
	}
	end := "\n"
	if o.Print0 {
		end = "\x00"
	}
	return s.eachPath(ctx, "find", args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail("find", p, err)
		}
		visit := func(fi client.FileInfo) error {
			if o.matches(fi) {
				fmt.Fprint(s.Out, s.show(fi.Path), end)
			}
			return nil
		}
		_ = visit(st)
		if !st.IsDir {
			return nil
		}
		return fail("find", p, s.walk(ctx, st.Path, visit))
	})
}

func (o FindOptions) matches(fi client.FileInfo) bool {
	name := path.Base(fi.Path)
	if o.Name != "" {
		if ok, _ := path.Match(o.Name, name); !ok {
			return false
		}
	}
	if o.IName != "" {
		if ok, _ := path.Match(strings.ToLower(o.IName), strings.ToLower(name)); !ok {
			return false
		}
	}
	switch o.Type {
	case 'f':
		return !fi.IsDir
	case 'd':
		return fi.IsDir
	}
	return true
}
