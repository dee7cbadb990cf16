package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"os"

	"smarth/internal/atomicfile"
	"smarth/internal/diskperm"
)

// This file holds what `smarth namenode` and `smarth datanode` share: the
// log destination and the ready file of the daemon conventions (the
// config file is daemonconf.Load's).

// daemonLogger logs text to stderr, or JSON appended to path when one is
// given; the closer closes that file.
func daemonLogger(path string) (*slog.Logger, io.Closer, error) {
	if path == "" {
		return slog.New(slog.NewTextHandler(os.Stderr, nil)), io.NopCloser(nil), nil
	}
	// The log names users' paths and jobs: the daemon's alone.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, diskperm.File)
	if err != nil {
		return nil, nil, err
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
