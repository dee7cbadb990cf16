package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"smarth/internal/client"
)

// TouchTimeLayout is the format of touch -t, as hdfs dfs -touch takes it
// (Java's yyyyMMdd:HHmmss), read in the local time zone as Java's
// SimpleDateFormat does.
const TouchTimeLayout = "20060102:150405"

// TouchOptions are touch's flags.
type TouchOptions struct {
	AccessOnly bool   // -a: change only the access time
	ModOnly    bool   // -m: change only the modification time
	Timestamp  string // -t: this time (TouchTimeLayout) instead of now
	NoCreate   bool   // -c: do not create missing files
}

// Touch sets the times of files to now (or -t), creating missing ones
// unless -c, as hdfs dfs -touch: a directory is an error, a missing parent
// is "No such file or directory", and a file it creates keeps the time of
// its creation unless -t names one.
func (s *Shell) Touch(ctx context.Context, args []string, o TouchOptions) error {
	when := s.now()
	if o.Timestamp != "" {
		t, err := time.ParseInLocation(TouchTimeLayout, o.Timestamp, time.Local)
		if err != nil {
			return fmt.Errorf("touch: unable to parse the specified timestamp %s (want yyyyMMdd:HHmmss): %w", o.Timestamp, fs.ErrInvalid)
		}
		when = t
	}
	mtime, atime := when, when
	if o.AccessOnly != o.ModOnly { // exactly one of -a, -m
		if o.AccessOnly {
			mtime = time.Time{}
		} else {
			atime = time.Time{}
		}
	}
	return s.eachPath(ctx, "touch", args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		switch {
		case err == nil && st.IsDir:
			return fail("touch", p, client.ErrIsDir)
		case err == nil:
			return fail("touch", p, s.FS.SetTimes(ctx, p, mtime, atime))
		case !errors.Is(err, fs.ErrNotExist):
			return fail("touch", p, err)
		case o.NoCreate:
			return nil
		}
		w, err := s.FS.Create(ctx, p, client.CreateOptions{NoCreateParent: true})
		if err != nil {
			return fail("touch", p, err)
		}
		if err := w.Close(); err != nil {
			return fail("touch", p, err)
		}
		if o.Timestamp == "" {
			return nil
		}
		return fail("touch", p, s.FS.SetTimes(ctx, p, mtime, atime))
	})
}

func (s *Shell) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
