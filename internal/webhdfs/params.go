package webhdfs

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// Bounds on what a request may carry, checked before anything is kept.
const (
	MaxQueryLen  = 64 << 10 // the raw query string
	MaxParams    = 256      // name=value pairs
	MaxPathLen   = 8000     // bytes; HDFS's dfs.namenode.fs-limits.max-path-length is 8000 characters
	MaxValueLen  = 32 << 10 // one value (xattr values are the largest: 16 KiB encoded)
	maxComponent = 255      // HDFS's max-component-length
)

// Prefix is where WebHDFS lives on a daemon's HTTP port.
const Prefix = "/webhdfs/v1"

// Params are the query parameters of a request. Names are matched without
// case, as Hadoop's ParamFilter lowercases them ("startAfter" and
// "startafter" are one parameter).
type Params struct {
	v map[string][]string
}

// ParseQuery decodes and bounds a raw query string.
func ParseQuery(raw string) (Params, error) {
	if len(raw) > MaxQueryLen {
		return Params{}, IllegalArgument(fmt.Sprintf("query string of %d bytes is longer than %d", len(raw), MaxQueryLen))
	}
	if n := strings.Count(raw, "&") + strings.Count(raw, ";") + 1; n > MaxParams {
		return Params{}, IllegalArgument(fmt.Sprintf("%d query parameters; at most %d are accepted", n, MaxParams))
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return Params{}, IllegalArgument("malformed query string: " + err.Error())
	}
	p := Params{v: make(map[string][]string, len(q))}
	for k, vs := range q {
		for _, v := range vs {
			if len(v) > MaxValueLen {
				return Params{}, paramError(k, fmt.Sprintf("value of %d bytes is longer than %d", len(v), MaxValueLen))
			}
		}
		lk := strings.ToLower(k)
		p.v[lk] = append(p.v[lk], vs...)
	}
	return p, nil
}

// Has says whether name was given.
func (p Params) Has(name string) bool { _, ok := p.v[strings.ToLower(name)]; return ok }

// Str is name's first value ("" when absent).
func (p Params) Str(name string) string {
	vs := p.v[strings.ToLower(name)]
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// All is every value of name, in order.
func (p Params) All(name string) []string { return p.v[strings.ToLower(name)] }

// Encode is the query string of p without the named parameters.
func (p Params) Encode(drop ...string) string {
	q := url.Values{}
	for k, vs := range p.v {
		skip := false
		for _, d := range drop {
			if strings.EqualFold(k, d) {
				skip = true
			}
		}
		if !skip {
			q[k] = vs
		}
	}
	return q.Encode()
}

// Bool is a boolean parameter ("true"/"false", any case), def when absent.
func (p Params) Bool(name string, def bool) (bool, error) {
	s := p.Str(name)
	switch {
	case s == "" || strings.EqualFold(s, "null"):
		return def, nil
	case strings.EqualFold(s, "true"):
		return true, nil
	case strings.EqualFold(s, "false"):
		return false, nil
	}
	return false, paramError(name, fmt.Sprintf("Failed to parse %q to Boolean.", s))
}

// Long is a decimal integer parameter of at least min, def when absent.
func (p Params) Long(name string, def, min int64) (int64, error) {
	s := p.Str(name)
	if s == "" || strings.EqualFold(s, "null") {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, paramError(name, fmt.Sprintf("Failed to parse %q as a radix-10 long integer.", s))
	}
	if n < min {
		return 0, paramError(name, fmt.Sprintf("Invalid parameter range: %s = %d < %d", name, n, min))
	}
	return n, nil
}

// Short is Long bounded to Java's short.
func (p Params) Short(name string, def, min int64) (int64, error) {
	n, err := p.Long(name, def, min)
	if err == nil && n > math.MaxInt16 {
		return 0, paramError(name, fmt.Sprintf("Invalid parameter range: %s = %d > %d", name, n, math.MaxInt16))
	}
	return n, err
}

// Permission is an octal mode in [0, 1777], def when absent.
func (p Params) Permission(name string, def uint32) (uint32, error) {
	s := p.Str(name)
	if s == "" || strings.EqualFold(s, "null") {
		return def, nil
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil {
		return 0, paramError(name, fmt.Sprintf("Failed to parse %q as a radix-8 integer.", s))
	}
	if n > 0o1777 {
		return 0, paramError(name, fmt.Sprintf("Invalid parameter range: %s = %o > 1777", name, n))
	}
	return uint32(n), nil
}

// userPattern is Hadoop's default dfs.webhdfs.user.provider.user.pattern.
var userPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9._-]*[$]?$`)

// User is a user-name parameter ("" when absent), checked against
// Hadoop's user pattern.
func (p Params) User(name string) (string, error) {
	s := p.Str(name)
	if s == "" || strings.EqualFold(s, "null") {
		return "", nil
	}
	if len(s) > 256 || !userPattern.MatchString(s) {
		return "", paramError(name, fmt.Sprintf("Invalid value: %q does not belong to the domain %s", s, userPattern))
	}
	return s, nil
}

// CleanPath checks and normalises an HDFS path taken from a URL: absolute,
// bounded, no "." or ".." components (HDFS refuses them too).
func CleanPath(name, p string) (string, error) {
	if p == "" {
		return "", paramError(name, "empty path")
	}
	if len(p) > MaxPathLen {
		return "", Exception("IOException", fmt.Sprintf("path of %d bytes is longer than %d", len(p), MaxPathLen))
	}
	if !strings.HasPrefix(p, "/") {
		return "", paramError(name, fmt.Sprintf("%q is not an absolute path", p))
	}
	for _, c := range strings.Split(p, "/") {
		if c == "." || c == ".." || strings.ContainsRune(c, 0) {
			return "", Exception("InvalidPathException", fmt.Sprintf("Invalid path name Invalid file name: %s", p))
		}
		if len(c) > maxComponent {
			return "", Exception("IOException", fmt.Sprintf("The maximum path component name limit of %s in directory is exceeded: limit=%d length=%d", c[:32]+"...", maxComponent, len(c)))
		}
	}
	return path.Clean(p), nil
}
