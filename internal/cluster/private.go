package cluster

import (
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"smarth/internal/diskperm"
)

// privateHome sets the modes of a cluster home (docs/security.md, "Data
// at rest"), as HDFS keeps its data directories 700:
//
//   - the home, data/ and tokens/ are passages (0711): another OS user
//     reaches cluster.json, the CA certificate and their own token file by
//     name, and lists nothing;
//   - logs/ and run/ are the owner's (0700, files 0600), narrowed with a
//     WARN on out where an older release left them open; keys/ is 0700;
//   - each node manager's work_dir starts 0700 (it holds jobs' spills);
//     the namenode's meta_dir, the datanodes' data_dir and the task logs
//     are narrowed by each daemon at its own start;
//   - conf/ and bin/ stay readable, as Hadoop's conf directory: the
//     configs name key and token files but hold no secret themselves.
//
// It runs at every Up, before anything starts.
func privateHome(home string, out io.Writer) error {
	if err := diskperm.MkdirAll(home, diskperm.Passage); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: slog.LevelWarn}))
	for _, d := range []string{"logs", "run"} {
		if _, err := diskperm.Fix(filepath.Join(home, d), diskperm.Dir, log); err != nil {
			return err
		}
	}
	data := filepath.Join(home, "data")
	if err := diskperm.MkdirAll(data, diskperm.Passage); err != nil {
		return err
	}
	ents, err := os.ReadDir(data)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "nm") {
			if err := diskperm.MkdirAll(filepath.Join(data, e.Name()), diskperm.Passage); err != nil {
				return err
			}
		}
	}
	// Key files are not narrowed: a key an older release left readable
	// is refused at its daemon's start (auth.LoadKey) and must be
	// replaced, not quietly kept.
	if _, err := os.Stat(filepath.Join(home, "keys")); err == nil {
		return diskperm.MkdirAll(filepath.Join(home, "keys"), diskperm.Dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
