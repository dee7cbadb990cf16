package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"

	"smarth/internal/atomicfile"
	"smarth/internal/diskperm"
	"smarth/internal/logfile"
)

// This file holds what `smarth namenode` and `smarth datanode` share: the
// log destination and the ready file of the daemon conventions (the
// config file is daemonconf.Load's).

// daemonLogger logs text to stderr, or JSON appended to path when one is
// given, rotated as the config's log_max_* keys say (the file and its
// backups private, internal/logfile); the closer closes that file.
func daemonLogger(path string, rot logfile.Rotation) (*slog.Logger, io.Closer, error) {
	if path == "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), io.NopCloser(nil), nil
	}
	f, err := logfile.Open(path, rot)
	if err != nil {
		return nil, nil, usageErr("--log-file %s: %v", path, err)
	}
	return slog.New(slog.NewJSONHandler(f, nil)), f, nil
}

// writeReadyFile writes keys as JSON to path atomically (atomicfile), so a
// supervisor polling for it never reads half a file. An empty
// path writes nothing.
func writeReadyFile(path string, keys map[string]any) error {
	if path == "" {
		return nil
	}
	b, err := json.Marshal(keys)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(b, '\n'), diskperm.File)
}
