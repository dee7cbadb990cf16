package fsshell

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"smarth/internal/client"
)

// hasGlob says whether p has an unescaped glob character: * ? [ {.
func hasGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[', '{':
			return true
		}
	}
	return false
}

// unescape drops the backslashes that kept glob characters literal.
func unescape(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

// expandBraces turns "{a,b}" alternatives into separate patterns, nested
// ones included, before matching: Go's path.Match has no braces, and
// expanding first lets an alternative hold a "/" (as Hadoop's
// GlobExpander allows). An unclosed "{" is taken literally.
func expandBraces(p string) []string {
	open, depth := -1, 0
	var commas []int
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open = i
				commas = commas[:0]
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i)
			}
		case '}':
			if depth == 0 {
				continue
			}
			depth--
			if depth > 0 {
				continue
			}
			var out []string
			start := open + 1
			for _, c := range append(commas, i) {
				for _, alt := range expandBraces(p[:open] + p[start:c] + p[i+1:]) {
					if !slices.Contains(out, alt) {
						out = append(out, alt)
					}
				}
				start = c + 1
			}
			return out
		}
	}
	if open >= 0 { // unclosed: literal "{"
		return []string{p[:open] + `\{` + p[open+1:]}
	}
	return []string{p}
}

// globComponent makes one path component of an HDFS glob into a
// path.Match pattern: "[!...]" is negation in HDFS, "[^...]" in Go.
func globComponent(c string) string { return strings.ReplaceAll(c, "[!", "[^") }

// glob expands an absolute pattern against the namespace, component by
// component: a component with glob characters lists its parent, a literal
// one is joined as is (and checked once at the end). Results are sorted
// and each exists.
func (s *Shell) glob(ctx context.Context, pattern string) ([]string, error) {
	var out []string
	for _, pat := range expandBraces(pattern) {
		ms, err := s.globOne(ctx, path.Clean(pat))
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

func (s *Shell) globOne(ctx context.Context, pattern string) ([]string, error) {
	cur := []string{"/"}
	lastLiteral := true
	for _, comp := range strings.Split(strings.TrimPrefix(pattern, "/"), "/") {
		if comp == "" {
			continue
		}
		lastLiteral = !hasGlob(comp)
		var next []string
		for _, dir := range cur {
			if lastLiteral {
				next = append(next, path.Join(dir, unescape(comp)))
				continue
			}
			ents, err := s.FS.List(ctx, dir)
			if err != nil {
				if gone(err) {
					continue
				}
				return nil, err
			}
			for _, e := range ents {
				if e.Path == dir {
					continue // dir is a file: List gave the file itself
				}
				ok, err := path.Match(globComponent(comp), e.Name)
				if err != nil {
					return nil, &client.PathError{Op: "glob", Path: pattern, Kind: fs.ErrInvalid, Msg: "bad pattern: " + err.Error()}
				}
				if ok {
					next = append(next, path.Join(dir, e.Name))
				}
			}
		}
		cur = next
	}
	if !lastLiteral {
		return cur, nil
	}
	var out []string
	for _, p := range cur {
		if _, err := s.FS.Stat(ctx, p); err == nil {
			out = append(out, p)
		} else if !gone(err) {
			return nil, err
		}
	}
	return out, nil
}

// gone says a path (or a parent) does not exist or is no directory: the
// glob simply has no match there.
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, client.ErrNotDir)
}
