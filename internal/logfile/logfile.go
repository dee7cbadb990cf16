// Package logfile is a daemon's own log file with size-based rotation,
// as Hadoop's log4j RollingFileAppender (RFA): past log_max_file_size
// the file is moved aside (NAME-TIMESTAMP.log beside it) and a new one
// started, and beyond log_max_backup_index old files (or those older than
// log_max_age) are removed, so a daemon left running for
// months does not fill the disk with its log. The rotation itself is
// lumberjack's (a well-kept library); this package holds the config keys,
// Hadoop's defaults (hadoop.log.maxfilesize=256MB,
// hadoop.log.maxbackupindex=20) and the file modes: the log names users'
// paths and jobs, so it and every backup are the daemon's alone (0600 in
// a 0700 directory, diskperm), also when an older release left it wider.
//
// What it leaves to others: what is logged and how (slog handlers, in
// cmd/smarth), where the file is (the launchers' --log-file).
package logfile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/natefinch/lumberjack.v2"

	"smarth/internal/diskperm"
	"smarth/internal/units"
)

// Hadoop's defaults, from its log4j.properties.
const (
	DefaultMaxFileSize    = 256 * units.MiB // hadoop.log.maxfilesize=256MB
	DefaultMaxBackupIndex = 20              // hadoop.log.maxbackupindex=20
)

const day = 24 * time.Hour

// Rotation is the log rotation keys of every daemon's config file.
type Rotation struct {
	// MaxFileSize is the size, bytes, past which the daemon's log file
	// (--log-file) is moved aside and a new one started, as Hadoop's
	// hadoop.log.maxfilesize; rounded up to whole MiB. 0: 256 MiB.
	MaxFileSize int64 `yaml:"log_max_file_size"`
	// MaxBackupIndex is how many rotated log files are kept, the oldest
	// removed first, as Hadoop's hadoop.log.maxbackupindex. 0: 20.
	MaxBackupIndex int `yaml:"log_max_backup_index"`
	// MaxAge removes rotated log files older than this too, rounded up to
	// whole days; 0 (the default, as Hadoop's RollingFileAppender) keeps
	// them by count alone.
	MaxAge time.Duration `yaml:"log_max_age"`
}

// Default is Hadoop's rotation.
func Default() Rotation {
	return Rotation{MaxFileSize: DefaultMaxFileSize, MaxBackupIndex: DefaultMaxBackupIndex}
}

// Validate says which key is wrong.
func (r Rotation) Validate() error {
	var errs []error
	if r.MaxFileSize < 0 {
		errs = append(errs, fmt.Errorf("log_max_file_size: %d bytes cannot be negative (0: %s)", r.MaxFileSize, units.FormatSize(DefaultMaxFileSize)))
	}
	if r.MaxBackupIndex < 0 {
		errs = append(errs, fmt.Errorf("log_max_backup_index: %d cannot be negative (0: %d)", r.MaxBackupIndex, DefaultMaxBackupIndex))
	}
	if r.MaxAge < 0 {
		errs = append(errs, fmt.Errorf("log_max_age: %v cannot be negative (0: no age limit)", r.MaxAge))
	}
	return errors.Join(errs...)
}

// Open opens path for appending with rotation r (zero fields take the
// defaults). The file and its directory are created private, and an
// existing log left wider is narrowed first: lumberjack gives each new
// file the mode of the one it replaces.
func Open(path string, r Rotation) (io.WriteCloser, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.MaxFileSize == 0 {
		r.MaxFileSize = DefaultMaxFileSize
	}
	if r.MaxBackupIndex == 0 {
		r.MaxBackupIndex = DefaultMaxBackupIndex
	}
	if err := os.MkdirAll(filepath.Dir(path), diskperm.Dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, diskperm.File)
	if err != nil {
		return nil, err
	}
	err = f.Chmod(diskperm.File)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return &lumberjack.Logger{
		Filename:   path,
		MaxSize:    int((r.MaxFileSize + units.MiB - 1) / units.MiB), // lumberjack counts megabytes
		MaxBackups: r.MaxBackupIndex,
		MaxAge:     int((r.MaxAge + day - 1) / day), // and days
		LocalTime:  true,
	}, nil
}
