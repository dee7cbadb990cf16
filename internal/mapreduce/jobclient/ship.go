package jobclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"smarth/internal/mapreduce"
)

// Ship uploads local files and archives (Hadoop's -files and -archives:
// comma lists, each entry a local path with an optional #name) to a new
// staging directory of the user's in the DFS, open to the user alone,
// and returns the job parameters naming them for the node managers to
// localize, and the staging directory (the caller deletes it when the
// job is over, as Hadoop's application master deletes its staging
// directory). An entry that already names the DFS (hdfs://host/p, or
// dfs:/p) is passed through without an upload.
func Ship(ctx context.Context, fsys mapreduce.FS, home string, files, archives []string) (params map[string]string, staging string, err error) {
	if len(files) == 0 && len(archives) == 0 {
		return nil, "", nil
	}
	type entry struct {
		local, name string
		archive     bool
	}
	var todo []entry
	params = map[string]string{}
	var dfsFiles, dfsArchives []string
	for _, list := range []struct {
		vals    []string
		archive bool
	}{{files, false}, {archives, true}} {
		for _, v := range list.vals {
			for _, ent := range strings.Split(v, ",") {
				ent = strings.TrimSpace(ent)
				if ent == "" {
					continue
				}
				src, name, hasName := strings.Cut(ent, "#")
				if p, ok := dfsPath(src); ok {
					if list.archive {
						dfsArchives = append(dfsArchives, p+fragment(name, hasName))
					} else {
						dfsFiles = append(dfsFiles, p+fragment(name, hasName))
					}
					continue
				}
				src = strings.TrimPrefix(src, "file://")
				abs, err := filepath.Abs(src)
				if err != nil {
					return nil, "", err
				}
				st, err := os.Stat(abs)
				switch {
				case errors.Is(err, fs.ErrNotExist):
					// Hadoop's words for a missing -files entry.
					return nil, "", fmt.Errorf("File file:%s does not exist", abs)
				case err != nil:
					return nil, "", err
				case st.IsDir():
					return nil, "", fmt.Errorf("%s is a directory: ship a directory as an archive (zip or tar it, then --archives)", abs)
				}
				if list.archive && !mapreduce.ArchiveKind(abs) {
					return nil, "", fmt.Errorf("%s: not an archive this runtime unpacks (.zip, .jar, .tar, .tar.gz, .tgz)", abs)
				}
				if !hasName {
					name = filepath.Base(abs)
				}
				todo = append(todo, entry{abs, name, list.archive})
			}
		}
	}
	var r [8]byte
	rand.Read(r[:])
	if len(todo) > 0 {
		staging = path.Join(home, ".staging", "shipped-"+hex.EncodeToString(r[:]))
		if err := fsys.MkdirAll(ctx, path.Dir(staging)); err != nil {
			return nil, "", fmt.Errorf("staging directory %s: %w", path.Dir(staging), err)
		}
		if err := fsys.Mkdir(ctx, staging); err != nil {
			return nil, "", fmt.Errorf("staging directory %s: %w", staging, err)
		}
		// Private before anything is in it: the files may hold code or
		// secrets of the user's.
		if ps, ok := fsys.(mapreduce.PermissionSetter); ok {
			if err := ps.SetPermission(ctx, staging, 0o700); err != nil {
				fsys.Delete(ctx, staging, true)
				return nil, "", fmt.Errorf("staging directory %s: %w", staging, err)
			}
		}
	}
	for i, e := range todo {
		// One subdirectory per entry keeps the uploaded names apart
		// whatever the local base names.
		dst := path.Join(staging, fmt.Sprint(i), filepath.Base(e.local))
		if err := upload(ctx, fsys, e.local, dst); err != nil {
			fsys.Delete(ctx, staging, true)
			return nil, "", err
		}
		if e.archive {
			dfsArchives = append(dfsArchives, dst+"#"+e.name)
		} else {
			dfsFiles = append(dfsFiles, dst+"#"+e.name)
		}
	}
	if len(dfsFiles) > 0 {
		params[mapreduce.ParamCacheFiles] = strings.Join(dfsFiles, ",")
	}
	if len(dfsArchives) > 0 {
		params[mapreduce.ParamCacheArchives] = strings.Join(dfsArchives, ",")
	}
	if _, err := mapreduce.ShippedOf(params); err != nil {
		if staging != "" {
			fsys.Delete(ctx, staging, true)
		}
		return nil, "", err
	}
	return params, staging, nil
}

func fragment(name string, has bool) string {
	if !has {
		return ""
	}
	return "#" + name
}

// dfsPath recognises an entry that names a DFS file rather than a local
// one: hdfs://authority/p, smarth://authority/p, or dfs:/p.
func dfsPath(s string) (string, bool) {
	for _, scheme := range []string{"hdfs://", "smarth://"} {
		if rest, ok := strings.CutPrefix(s, scheme); ok {
			if i := strings.IndexByte(rest, '/'); i >= 0 {
				return rest[i:], true
			}
			return "/", true
		}
	}
	if rest, ok := strings.CutPrefix(s, "dfs:"); ok {
		return rest, true
	}
	return "", false
}

func upload(ctx context.Context, fsys mapreduce.FS, local, dst string) error {
	f, err := os.Open(local)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := fsys.MkdirAll(ctx, path.Dir(dst)); err != nil {
		return fmt.Errorf("ship %s: %w", local, err)
	}
	w, err := fsys.Create(ctx, dst, mapreduce.CreateOptions{})
	if err != nil {
		return fmt.Errorf("ship %s to %s: %w", local, dst, err)
	}
	if _, err := io.Copy(w, f); err != nil {
		w.Close()
		return fmt.Errorf("ship %s to %s: %w", local, dst, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("ship %s to %s: %w", local, dst, err)
	}
	return nil
}
