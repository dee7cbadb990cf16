package mapreduce

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// The job parameters that name shipped files (Hadoop's distributed
// cache, as `-files` and `-archives` set them): comma lists of DFS paths,
// each with an optional #link name, the name the file or unpacked archive
// has in a task's work directory.
const (
	ParamCacheFiles    = "mapreduce.job.cache.files"
	ParamCacheArchives = "mapreduce.job.cache.archives"
)

// Shipped is one file a job ships to its tasks.
type Shipped struct {
	Path    string // in the DFS
	Name    string // in the task's work directory
	Archive bool   // unpacked into a directory Name
}

// MaxShipped bounds the entries a job may ship, so that a job's
// parameters cannot make a node manager start unbounded downloads.
const MaxShipped = 256

// ShippedOf reads a job's shipped files from its parameters, refusing a
// link name that is not a plain name (it is joined to the work directory)
// and two entries with the same name.
func ShippedOf(params map[string]string) ([]Shipped, error) {
	var out []Shipped
	seen := map[string]string{}
	for _, p := range []struct {
		key     string
		archive bool
	}{{ParamCacheFiles, false}, {ParamCacheArchives, true}} {
		v := strings.TrimSpace(params[p.key])
		if v == "" {
			continue
		}
		for _, ent := range strings.Split(v, ",") {
			ent = strings.TrimSpace(ent)
			if ent == "" {
				continue
			}
			dfsPath, name, hasName := strings.Cut(ent, "#")
			if !hasName {
				name = path.Base(dfsPath)
			}
			if !strings.HasPrefix(dfsPath, "/") {
				return nil, &ParamError{Msg: fmt.Sprintf("%s: %q is not an absolute DFS path", p.key, dfsPath)}
			}
			if err := checkLinkName(name); err != nil {
				return nil, &ParamError{Msg: fmt.Sprintf("%s: %q: %v", p.key, ent, err)}
			}
			if prev, dup := seen[name]; dup {
				return nil, &ParamError{Msg: fmt.Sprintf("%s: %s and %s would both be %q in the task's directory", p.key, prev, dfsPath, name)}
			}
			seen[name] = dfsPath
			out = append(out, Shipped{Path: path.Clean(dfsPath), Name: name, Archive: p.archive})
			if len(out) > MaxShipped {
				return nil, &ParamError{Msg: fmt.Sprintf("a job ships at most %d files and archives", MaxShipped)}
			}
		}
	}
	return out, nil
}

func checkLinkName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("link name %q is not a file name", name)
	case strings.ContainsAny(name, "/\x00"):
		return fmt.Errorf("link name %q must not contain '/'", name)
	case strings.HasPrefix(name, "."):
		// The work directory's own entries (.smarth holds the token)
		// must not be shadowed.
		return fmt.Errorf("link name %q must not start with '.'", name)
	}
	return nil
}

// ArchiveKind reports whether name ends as an archive the node managers
// unpack (Hadoop's: .zip, .jar, .tar, .tar.gz, .tgz).
func ArchiveKind(name string) bool {
	n := strings.ToLower(name)
	for _, ext := range []string{".zip", ".jar", ".tar", ".tar.gz", ".tgz"} {
		if strings.HasSuffix(n, ext) {
			return true
		}
	}
	return false
}

// PermissionSetter is an FS that sets a path's permission bits (the
// DFS); staging directories are made private with it.
type PermissionSetter interface {
	SetPermission(ctx context.Context, path string, mode fs.FileMode) error
}
