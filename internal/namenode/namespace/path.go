package namespace

import (
	"fmt"
	"strings"
)

// Limits on names, as HDFS's defaults (dfs.namenode.fs-limits.*).
const (
	MaxNameLen = 255
	MaxPathLen = 8000
)

// Components splits an absolute path into its names and checks each. A
// trailing slash is tolerated ("/a/b/" is "/a/b"); the root has no
// components.
func Components(path string) ([]string, error) {
	if path == "" {
		return nil, fmt.Errorf("empty path")
	}
	if path[0] != '/' {
		return nil, fmt.Errorf("path must be absolute (start with \"/\")")
	}
	if len(path) > MaxPathLen {
		return nil, fmt.Errorf("path is %d bytes long, the limit is %d", len(path), MaxPathLen)
	}
	if path == "/" {
		return nil, nil
	}
	p := strings.TrimSuffix(path[1:], "/")
	names := strings.Split(p, "/")
	for _, n := range names {
		if err := ValidName(n); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// ValidName checks one path component.
func ValidName(n string) error {
	switch {
	case n == "":
		return fmt.Errorf("empty path component (\"//\")")
	case n == "." || n == "..":
		return fmt.Errorf("invalid path component %q", n)
	case strings.ContainsRune(n, ':'):
		return fmt.Errorf("invalid path component %q: contains \":\"", n)
	case strings.ContainsRune(n, 0):
		return fmt.Errorf("invalid path component %q: contains a NUL byte", n)
	case len(n) > MaxNameLen:
		return fmt.Errorf("path component is %d bytes long, the limit is %d", len(n), MaxNameLen)
	}
	return nil
}

// Clean returns the canonical form of a valid path (no trailing slash).
func Clean(path string) (string, error) {
	names, err := Components(path)
	if err != nil {
		return "", err
	}
	return Join(names), nil
}

// Join builds an absolute path from components.
func Join(names []string) string {
	if len(names) == 0 {
		return "/"
	}
	return "/" + strings.Join(names, "/")
}
