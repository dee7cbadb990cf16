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
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if path == "/" {
		return nil, nil
	}
	return strings.Split(strings.TrimSuffix(path[1:], "/"), "/"), nil
}

// checkPath is Components' validation, without building the names.
func checkPath(path string) error {
	if path == "" {
		return fmt.Errorf("empty path")
	}
	if path[0] != '/' {
		return fmt.Errorf("path must be absolute (start with \"/\")")
	}
	if len(path) > MaxPathLen {
		return fmt.Errorf("path is %d bytes long, the limit is %d", len(path), MaxPathLen)
	}
	if path == "/" {
		return nil
	}
	for p := strings.TrimSuffix(path[1:], "/"); ; {
		name, rest, more := strings.Cut(p, "/")
		if err := ValidName(name); err != nil {
			return err
		}
		if !more {
			return nil
		}
		p = rest
	}
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
	// Without building the names: every RPC that names a path cleans it.
	if err := checkPath(path); err != nil {
		return "", err
	}
	return trimSlash(path), nil
}

// trimSlash is a valid path's canonical form: without the trailing slash,
// the one non-canonical form checkPath accepts.
func trimSlash(path string) string {
	if len(path) > 1 && path[len(path)-1] == '/' {
		return path[:len(path)-1]
	}
	return path
}

// Join builds an absolute path from components.
func Join(names []string) string {
	if len(names) == 0 {
		return "/"
	}
	return "/" + strings.Join(names, "/")
}
