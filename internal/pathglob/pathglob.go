// Package pathglob expands HDFS glob patterns (`*`, `?`, `[...]`, `[!...]`,
// `{a,b}`, backslash escapes) against a namespace, as Hadoop's
// FileSystem.globStatus does. The shell (`fs -ls /data/part-*`) and job
// inputs (`job run --input '/data/text/part-*'`) expand patterns with the
// same code, so a pattern means the same thing to both.
package pathglob

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Has says whether p has an unescaped glob character: * ? [ {.
func Has(p string) bool {
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

// Unescape drops the backslashes that kept glob characters literal.
func Unescape(p string) string {
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

// component makes one path component of an HDFS glob into a
// path.Match pattern: "[!...]" is negation in HDFS, "[^...]" in Go.
func component(c string) string { return strings.ReplaceAll(c, "[!", "[^") }

// Namespace is what a pattern is matched against.
type Namespace interface {
	// Names lists the names of dir's entries; a dir that does not exist
	// or is a file has none (nil, nil): the pattern has no match there.
	Names(ctx context.Context, dir string) ([]string, error)
	// Exists says whether p exists.
	Exists(ctx context.Context, p string) (bool, error)
}

// BadPatternError is a pattern path.Match refuses (an unclosed "[").
type BadPatternError struct {
	Pattern string
	Err     error
}

func (e *BadPatternError) Error() string { return "bad pattern: " + e.Err.Error() }
func (e *BadPatternError) Unwrap() error { return e.Err }

// Expand matches an absolute pattern against ns, component by component:
// a component with glob characters lists its parent, a literal one is
// joined as is (and checked once at the end). The matches are sorted,
// each exists, and none is repeated; no match is an empty result, not an
// error (the caller words it: `ls` and job inputs say different things).
func Expand(ctx context.Context, ns Namespace, pattern string) ([]string, error) {
	var out []string
	for _, pat := range expandBraces(pattern) {
		ms, err := expandOne(ctx, ns, path.Clean(pat))
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

func expandOne(ctx context.Context, ns Namespace, pattern string) ([]string, error) {
	if !strings.HasPrefix(pattern, "/") {
		return nil, fmt.Errorf("glob %q: the pattern must be an absolute path", pattern)
	}
	cur := []string{"/"}
	lastLiteral := true
	for _, comp := range strings.Split(strings.TrimPrefix(pattern, "/"), "/") {
		if comp == "" {
			continue
		}
		lastLiteral = !Has(comp)
		var next []string
		for _, dir := range cur {
			if lastLiteral {
				next = append(next, path.Join(dir, Unescape(comp)))
				continue
			}
			names, err := ns.Names(ctx, dir)
			if err != nil {
				return nil, err
			}
			for _, name := range names {
				ok, err := path.Match(component(comp), name)
				if err != nil {
					return nil, &BadPatternError{Pattern: pattern, Err: err}
				}
				if ok {
					next = append(next, path.Join(dir, name))
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
		ok, err := ns.Exists(ctx, p)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, p)
		}
	}
	return out, nil
}
