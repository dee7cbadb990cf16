package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
)

// moveToTrash moves p to the trash for rm; done is false when rm should
// delete p itself (no trash, or p is already in it). A failure other than
// a missing path says how to go around the trash, as HDFS's does.
func (s *Shell) moveToTrash(ctx context.Context, p string) (done bool, err error) {
	dst, moved, err := s.FS.MoveToTrash(ctx, p, s.now())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, fail("rm", p, err)
		}
		// HDFS's words; the cause is rendered here, not wrapped, so that
		// the message keeps its advice.
		return false, &Error{Cmd: "rm", Err: fmt.Errorf("Failed to move to trash: `%s': %s. Consider using -skipTrash option", p, hdfsMessage(err))} //nolint:staticcheck // HDFS's capitalised message
	}
	if moved {
		// HDFS's TrashPolicyDefault logs this line (to stderr, as
		// `hadoop fs` sets up its log) with both paths fully qualified.
		fmt.Fprintf(s.Err, "Moved: '%s' to trash at: %s\n", s.qualify(p), s.qualify(dst))
	}
	return moved, nil
}

// Expunge empties the trash as hdfs dfs -expunge: it deletes the
// checkpoints older than the trash interval and then checkpoints Current
// (immediate: checkpoints Current and deletes every checkpoint). With no
// trash interval there is nothing to expire.
func (s *Shell) Expunge(ctx context.Context, immediate bool) error {
	interval, err := s.FS.TrashInterval(ctx)
	if err != nil {
		return fail("expunge", s.FS.TrashRoot(), err)
	}
	if interval <= 0 && !immediate {
		return nil
	}
	now := s.now()
	if immediate {
		if err := s.trashCheckpoint(ctx); err != nil {
			return err
		}
	}
	deleted, unexpected, err := s.FS.ExpiredCheckpoints(ctx, now, immediate)
	for _, u := range unexpected {
		fmt.Fprintf(s.Err, "expunge: unexpected item in trash: %s. Ignoring.\n", u)
	}
	for _, d := range deleted {
		fmt.Fprintln(s.Out, "Deleted trash checkpoint:", d)
	}
	if err != nil {
		return fail("expunge", s.FS.TrashRoot(), err)
	}
	if immediate {
		return nil
	}
	return s.trashCheckpoint(ctx)
}

func (s *Shell) trashCheckpoint(ctx context.Context) error {
	cp, err := s.FS.TrashCheckpoint(ctx, s.now())
	if err != nil {
		return fail("expunge", s.FS.TrashRoot(), err)
	}
	if cp != "" {
		fmt.Fprintln(s.Out, "Created trash checkpoint:", cp)
	}
	return nil
}
