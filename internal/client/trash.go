package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"smarth/internal/rpc/dfspb"
	"smarth/internal/trash"
)

// The trash follows Hadoop's TrashPolicyDefault: a user's deletes move to
// /user/<user>/.Trash/Current/<original path>; a checkpoint renames Current
// to a directory named after the time (package trash); checkpoints older
// than the trash interval are deleted. It is a client policy over plain
// namespace operations (mkdir, rename, delete), as in HDFS, so the
// namenode journals it like any other change.

// TrashInterval is how long deleted files stay in the trash: the
// namenode's trash_interval when it sets one, else Config.TrashInterval; 0
// means there is no trash.
func (f *FileSystem) TrashInterval(ctx context.Context) (time.Duration, error) {
	d, err := f.serverDefaults(ctx)
	if err != nil {
		return 0, mapError("trash", "/", err)
	}
	if ms := d.GetTrashIntervalMs(); ms > 0 {
		return time.Duration(ms) * time.Millisecond, nil
	}
	return f.cfg.TrashInterval, nil
}

// TrashRoot is the user's trash directory, /user/<user>/.Trash.
func (f *FileSystem) TrashRoot() string { return trash.Root(f.cfg.User) }

// MoveToTrash moves p into the trash and returns where it went. moved is
// false, with no error, when there is no trash (interval 0) or p is
// already in the trash: the caller deletes it then, as HDFS does. A path
// that holds the trash itself cannot go there.
func (f *FileSystem) MoveToTrash(ctx context.Context, p string, now time.Time) (dst string, moved bool, err error) {
	p, err = cleanPath(p)
	if err != nil {
		return "", false, err
	}
	interval, err := f.TrashInterval(ctx)
	if err != nil || interval <= 0 {
		return "", false, err
	}
	root := f.TrashRoot()
	switch {
	case within(p, root):
		return "", false, nil
	case within(path.Dir(root), p):
		return "", false, &PathError{Op: "rm", Path: p, Kind: fs.ErrInvalid,
			Msg: fmt.Sprintf("cannot move %q to the trash, as it contains the trash", p)}
	}
	if _, err := f.Stat(ctx, p); err != nil {
		return "", false, err
	}
	if err := f.Mkdir(ctx, root, trash.Permission, true); err != nil {
		return "", false, err
	}
	target, err := f.trashTarget(ctx, path.Join(root, trash.Current, p), now)
	if err != nil {
		return "", false, err
	}
	// Rename.TO_TRASH, as Hadoop 3.4's TrashPolicyDefault: the namenode
	// also requires what deleting p would (a plain rename let a user trash
	// a tree holding directories they may not delete, which the trash
	// emptier, a superuser, then deleted for them). target is free, so
	// rename2's exact destination is where rename would have put it.
	if _, err := f.nn.Rename(ctx, &dfspb.RenameRequest{Src: p, Dst: target, Rename2: true, ToTrash: true}); err != nil {
		return "", false, mapError("rm", p, err)
	}
	return target, true, nil
}

// trashTarget makes the parent of target and returns a name under it that
// is free, resolving collisions as TrashPolicyDefault does: a file where
// a parent directory should be gets the parent path suffixed with the
// time in ms; a taken name gets the time in ms appended.
func (f *FileSystem) trashTarget(ctx context.Context, target string, now time.Time) (string, error) {
	base, name := path.Dir(target), path.Base(target)
	if err := f.Mkdir(ctx, base, trash.Permission, true); err != nil {
		if !errors.Is(err, fs.ErrExist) && !errors.Is(err, ErrNotDir) {
			return "", err
		}
		inTheWay := base
		for inTheWay != "/" {
			if _, serr := f.Stat(ctx, inTheWay); serr == nil {
				break
			}
			inTheWay = path.Dir(inTheWay)
		}
		base = strings.Replace(base, inTheWay, inTheWay+strconv.FormatInt(now.UnixMilli(), 10), 1)
		if err := f.Mkdir(ctx, base, trash.Permission, true); err != nil {
			return "", err
		}
	}
	target = path.Join(base, name)
	for free, ms := target, now.UnixMilli(); ; ms++ {
		if _, err := f.Stat(ctx, free); errors.Is(err, fs.ErrNotExist) {
			return free, nil
		} else if err != nil {
			return "", err
		}
		free = target + strconv.FormatInt(ms, 10)
	}
}

// within reports whether p is dir or under it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// TrashCheckpoint renames the trash's Current to a checkpoint named after
// now (a "-N" suffix when that name is taken) and returns it; "" when
// there is nothing in Current.
func (f *FileSystem) TrashCheckpoint(ctx context.Context, now time.Time) (string, error) {
	root := f.TrashRoot()
	cur := path.Join(root, trash.Current)
	if _, err := f.Stat(ctx, cur); errors.Is(err, fs.ErrNotExist) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	var name string
	for try := 0; ; try++ {
		if try > trash.MaxCheckpointTries {
			return "", &PathError{Op: "expunge", Path: name, Kind: fs.ErrExist, Msg: "cannot find a free checkpoint name"}
		}
		name = path.Join(root, trash.CheckpointName(now, try))
		_, err := f.Stat(ctx, name)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return "", err
		}
	}
	return name, f.Rename(ctx, cur, name)
}

// ExpiredCheckpoints deletes the trash checkpoints older than the
// interval (all of them with immediate) and returns those deleted, oldest
// first, and the entries it did not understand (left alone, as HDFS
// leaves them).
func (f *FileSystem) ExpiredCheckpoints(ctx context.Context, now time.Time, immediate bool) (deleted, unexpected []string, err error) {
	interval, err := f.TrashInterval(ctx)
	if err != nil {
		return nil, nil, err
	}
	ents, err := f.List(ctx, f.TrashRoot())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name < ents[j].Name })
	for _, e := range ents {
		if e.Name == trash.Current || !e.IsDir {
			continue
		}
		at, ok := trash.CheckpointTime(e.Name)
		if !ok {
			unexpected = append(unexpected, e.Path)
			continue
		}
		if !immediate && !trash.Expired(at, now, interval) {
			continue
		}
		if err := f.Delete(ctx, e.Path, true); err != nil {
			return deleted, unexpected, err
		}
		deleted = append(deleted, e.Path)
	}
	return deleted, unexpected, nil
}
