package fsshell

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"smarth/internal/client"
)

// ModeChange is a parsed chmod MODE: it gives the new mode of an entry
// from its current one (symbolic modes such as "g+w" or "a+X" depend on
// it).
type ModeChange func(old fs.FileMode, isDir bool) fs.FileMode

// ParseMode parses chmod's MODE as HDFS does: octal (644, 1777) or
// symbolic clauses separated by commas, [ugoa]*([-+=][rwxXt]*)+ ("u+x",
// "go-w", "a=rX", "+t"). No who letter means all.
func ParseMode(spec string) (ModeChange, error) {
	if spec != "" && strings.Trim(spec, "01234567") == "" {
		if len(spec) > 4 {
			return nil, fmt.Errorf("%w: mode %q: at most 4 octal digits", fs.ErrInvalid, spec)
		}
		n, _ := strconv.ParseUint(spec, 8, 32)
		m := client.ModeOf(uint32(n))
		return func(fs.FileMode, bool) fs.FileMode { return m }, nil
	}
	var steps []ModeChange
	for _, clause := range strings.Split(spec, ",") {
		st, err := parseClause(clause)
		if err != nil {
			return nil, fmt.Errorf("%w: mode %q: %v (want octal such as 755 or symbolic such as u+x,go-w)", fs.ErrInvalid, spec, err)
		}
		steps = append(steps, st...)
	}
	return func(m fs.FileMode, isDir bool) fs.FileMode {
		for _, st := range steps {
			m = st(m, isDir)
		}
		return m
	}, nil
}

// parseClause parses one "[ugoa]*([-+=][rwxXt]*)+" clause.
func parseClause(c string) ([]ModeChange, error) {
	i := 0
	var who fs.FileMode
	for ; i < len(c) && strings.IndexByte("ugoa", c[i]) >= 0; i++ {
		who |= map[byte]fs.FileMode{'u': 0o700, 'g': 0o070, 'o': 0o007, 'a': 0o777}[c[i]]
	}
	if who == 0 {
		who = 0o777
	}
	if i == len(c) {
		return nil, fmt.Errorf("%q has no +, - or =", c)
	}
	var steps []ModeChange
	for i < len(c) {
		op := c[i]
		if op != '+' && op != '-' && op != '=' {
			return nil, fmt.Errorf("%q: unexpected %q", c, op)
		}
		i++
		var rwx fs.FileMode
		var bigX, sticky bool
		for ; i < len(c) && strings.IndexByte("rwxXt", c[i]) >= 0; i++ {
			switch c[i] {
			case 'r':
				rwx |= 0o444
			case 'w':
				rwx |= 0o222
			case 'x':
				rwx |= 0o111
			case 'X':
				bigX = true
			case 't':
				sticky = true
			}
		}
		steps = append(steps, clauseStep(op, who, rwx, bigX, sticky))
	}
	return steps, nil
}

func clauseStep(op byte, who, rwx fs.FileMode, bigX, sticky bool) ModeChange {
	return func(m fs.FileMode, isDir bool) fs.FileMode {
		bits := rwx
		// X: execute only for directories and files someone may
		// already execute, so "a+rX" opens a tree without making data
		// files executable.
		if bigX && (isDir || m&0o111 != 0) {
			bits |= 0o111
		}
		bits &= who
		switch op {
		case '+':
			m |= bits
		case '-':
			m &^= bits
		case '=':
			m = m&^who | bits
		}
		if sticky {
			if op == '-' {
				m &^= fs.ModeSticky
			} else {
				m |= fs.ModeSticky
			}
		} else if op == '=' && who&0o007 != 0 {
			m &^= fs.ModeSticky // "o=rx" sets others' bits exactly
		}
		return m
	}
}

// Chmod changes the mode of each path (and everything under it with
// recursive). Only the owner or a superuser may; the namenode checks.
func (s *Shell) Chmod(ctx context.Context, spec string, args []string, recursive bool) error {
	change, err := ParseMode(spec)
	if err != nil {
		return fail("chmod", "", err)
	}
	return s.eachPath(ctx, "chmod", args, func(p string) error {
		return s.apply(ctx, "chmod", p, recursive, func(fi client.FileInfo) error {
			if m := change(fi.Mode&(fs.ModePerm|fs.ModeSticky), fi.IsDir); m != fi.Mode&(fs.ModePerm|fs.ModeSticky) {
				return s.FS.SetPermission(ctx, fi.Path, m)
			}
			return nil
		})
	})
}

// ParseOwner parses chown's OWNER[:GROUP] (also "OWNER:", ":GROUP" and
// HDFS's older "OWNER.GROUP").
func ParseOwner(spec string) (owner, group string, err error) {
	owner, group = spec, ""
	if i := strings.IndexAny(spec, ":."); i >= 0 {
		owner, group = spec[:i], spec[i+1:]
	}
	if owner == "" && group == "" || strings.ContainsAny(owner+group, " \t:/") {
		return "", "", fmt.Errorf("%w: %q: want OWNER[:GROUP] or :GROUP", fs.ErrInvalid, spec)
	}
	return owner, group, nil
}

// Chown changes owner and/or group of each path (and everything under it
// with recursive). Only a superuser may change the owner; an owner may
// change the group to one of their own groups.
func (s *Shell) Chown(ctx context.Context, cmd, owner, group string, args []string, recursive bool) error {
	return s.eachPath(ctx, cmd, args, func(p string) error {
		return s.apply(ctx, cmd, p, recursive, func(fi client.FileInfo) error {
			return s.FS.SetOwner(ctx, fi.Path, owner, group)
		})
	})
}

// apply runs f on p and, with recursive, on every entry under it; the
// first failure stops the walk and names its entry.
func (s *Shell) apply(ctx context.Context, cmd, p string, recursive bool, f func(client.FileInfo) error) error {
	st, err := s.FS.Stat(ctx, p)
	if err != nil {
		return fail(cmd, p, err)
	}
	if err := f(st); err != nil {
		return fail(cmd, p, err)
	}
	if !recursive || !st.IsDir {
		return nil
	}
	return s.walk(ctx, st.Path, func(fi client.FileInfo) error {
		return fail(cmd, fi.Path, f(fi))
	})
}
