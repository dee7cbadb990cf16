package chaos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"smarth/internal/client"
)

// verify checks every promise, retrying checks that fail for a reason
// other than the promise being broken (a restarted datanode's replicas
// may still be coming back) until ctx ends. Wrong content, or a name that
// should hold a file and does not, is lost at once: no one but the run
// touches its directory, and every daemon is back.
func (r *run) verify(ctx context.Context, fsys *client.FileSystem) {
	r.mu.Lock()
	files := make([]*ackedFile, 0, len(r.files))
	for _, f := range r.files {
		files = append(files, f)
	}
	jobs := slices.Clone(r.jobs)
	deleted := slices.Clone(r.deleted)
	early := r.verified
	r.mu.Unlock()
	slices.SortFunc(files, func(a, b *ackedFile) int { return a.id - b.id })
	r.rep.Acked = len(files) + len(jobs) + len(deleted) + early + r.renamesAcked()
	for _, f := range deleted {
		r.checkAbsent(ctx, fsys, &f.hist, f.path, "acknowledged delete")
		for _, o := range f.old {
			r.checkAbsent(ctx, fsys, &f.hist, o, "old name of an acknowledged rename of "+f.path)
		}
	}
	r.logf("verifying %d acknowledged files and %d succeeded jobs", len(files), len(jobs))

	pending := files
	for round := 0; len(pending) > 0; round++ {
		var again []*ackedFile
		var lastErr error
		for _, f := range pending {
			if err := r.checkFile(ctx, fsys, f); err != nil {
				again, lastErr = append(again, f), err
			}
		}
		pending = again
		if len(pending) == 0 {
			break
		}
		if ctx.Err() != nil {
			for _, f := range pending {
				r.lost(&f.hist, "%s (acknowledged put of %d bytes): not readable: %v", f.path, f.size, lastErr)
			}
			break
		}
		if round == 0 {
			r.logf("%d files not readable yet (%v); retrying", len(pending), lastErr)
		}
		time.Sleep(time.Second) // replicas coming back: a retry, bounded by ctx
	}
	for _, f := range files {
		for _, o := range f.old {
			r.checkAbsent(ctx, fsys, &f.hist, o, "old name of an acknowledged rename to "+f.path)
		}
	}
	for _, j := range jobs {
		for {
			what, err := checkJob(ctx, fsys, j)
			if err == nil {
				break
			}
			if err == errWrongContent {
				r.lost(&j.hist, "job %s (%s) output %s: %s", j.id, j.app, j.output, what)
				break
			}
			if errors.Is(err, fs.ErrNotExist) {
				r.lost(&j.hist, "job %s (%s) output %s: gone: %v", j.id, j.app, j.output, err)
				break
			}
			if ctx.Err() != nil {
				r.lost(&j.hist, "job %s (%s) output %s: not readable: %v", j.id, j.app, j.output, err)
				break
			}
			time.Sleep(time.Second) // as above
		}
	}
	r.mu.Lock()
	r.rep.Acked -= len(r.rep.Unverifiable)
	r.mu.Unlock()
}

// checkFile checks one acknowledged file: nil when its promise is kept or
// has been reported (lost, unverifiable), the error of a check to retry.
func (r *run) checkFile(ctx context.Context, fsys *client.FileSystem, f *ackedFile) error {
	what := fmt.Sprintf("%s (acknowledged put of %d bytes)", f.path, f.size)
	err := r.readCheck(ctx, fsys, f.path, f.size, f.sum)
	switch {
	case err == nil:
		if f.alt != "" {
			// The rename that failed did not happen: its target must not
			// exist either.
			r.checkAbsent(ctx, fsys, &f.hist, f.alt, "target of a failed rename of "+f.path+", which is still there")
		}
		return nil
	case err == errWrongContent:
		r.lost(&f.hist, "%s: content differs", what)
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	// f.path does not exist.
	switch {
	case f.alt != "":
		err := r.readCheck(ctx, fsys, f.alt, f.size, f.sum)
		switch {
		case err == nil:
			return nil // the rename that failed happened; f.path was checked absent
		case err == errWrongContent:
			r.lost(&f.hist, "%s, renamed to %s by a rename that failed: content differs", what, f.alt)
		case errors.Is(err, fs.ErrNotExist):
			r.lost(&f.hist, "%s: under neither its name nor %s (the target of a rename that failed)", what, f.alt)
		default:
			return err
		}
	case f.delInDoubt:
		r.unverifiable(&f.hist, "%s: absent; a delete of it failed, and whether the namenode applied it cannot be checked", what)
	default:
		r.lost(&f.hist, "%s: gone", what)
	}
	return nil
}

// checkAbsent reports p lost if it exists: a name an acknowledged delete
// or rename removed. Stat errors other than "does not exist" are retried
// until ctx ends; then the promise is unverifiable.
func (r *run) checkAbsent(ctx context.Context, fsys *client.FileSystem, h *history, p, why string) {
	fi, err := r.statUntil(ctx, fsys, p)
	switch {
	case err == nil:
		r.lost(h, "%s (%s): exists (%d bytes)", p, why, fi.Size)
	case !errors.Is(err, fs.ErrNotExist):
		r.unverifiable(h, "%s (%s): cannot stat: %v", p, why, err)
	}
}

// statUntil stats p, retrying errors other than "does not exist" until
// ctx ends (the namenode may still be starting).
func (r *run) statUntil(ctx context.Context, fsys *client.FileSystem, p string) (client.FileInfo, error) {
	for {
		fi, err := fsys.Stat(ctx, p)
		if err == nil || errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
			return fi, err
		}
		sleepCtx(ctx, time.Second)
	}
}

func (r *run) renamesAcked() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.rep.Ops["rename"]; c != nil {
		return c.OK
	}
	return 0
}
