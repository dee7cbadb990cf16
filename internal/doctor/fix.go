package doctor

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// RevertFile records what Fix changed, written before any change so that a
// crash in the middle still leaves the way back.
type RevertFile struct {
	Root    string         `json:"root"`
	Written time.Time      `json:"written"`
	Changes []RevertChange `json:"changes"`
}

// RevertChange is one file's old and new content.
type RevertChange struct {
	Check string `json:"check"`
	Path  string `json:"path"` // relative to Root
	Old   string `json:"old"`
	New   string `json:"new"`
}

// Fix applies the writes of every result that is not ok: first it reads
// the current contents and writes them to revertPath (synced), and only
// then changes anything. With nothing to fix it writes nothing. It stops at
// the first failed write and says which were applied; Revert undoes them.
func Fix(e *Env, results []Result, revertPath string) ([]RevertChange, error) {
	rf := RevertFile{Root: e.Root, Written: time.Now().UTC()}
	for _, r := range results {
		if r.Status == OK || r.Status == Skip {
			continue
		}
		for _, w := range r.Writes {
			old, err := e.read(w.Path)
			if err != nil {
				return nil, fmt.Errorf("fix %s: reading %s: %w", r.ID, w.Path, err)
			}
			if b := bracketed(old); b != "" && b != old {
				// A sysfs choice list reads "[always] madvise never"
				// but takes only the word back.
				old = b
			}
			rf.Changes = append(rf.Changes, RevertChange{Check: r.ID, Path: w.Path, Old: old, New: w.Content})
		}
	}
	if len(rf.Changes) == 0 {
		return nil, nil
	}
	if err := writeSynced(revertPath, rf); err != nil {
		return nil, fmt.Errorf("fix: writing the revert file first: %w; nothing changed", err)
	}
	for i, c := range rf.Changes {
		if err := os.WriteFile(e.path(c.Path), []byte(c.New+"\n"), 0o644); err != nil {
			return rf.Changes[:i], fmt.Errorf("fix %s: writing %s: %w (the %d changes before it are applied; revert with %s)", c.Check, c.Path, err, i, revertPath)
		}
	}
	return rf.Changes, nil
}

// Revert writes back the old contents recorded in a revert file, in
// reverse order, and reports every write that failed.
func Revert(e *Env, revertPath string) ([]RevertChange, error) {
	b, err := os.ReadFile(revertPath)
	if err != nil {
		return nil, err
	}
	var rf RevertFile
	if err := json.Unmarshal(b, &rf); err != nil {
		return nil, fmt.Errorf("revert file %s: %w", revertPath, err)
	}
	if rf.Root != e.Root {
		return nil, fmt.Errorf("revert file %s is for root %s, not %s", revertPath, rf.Root, e.Root)
	}
	var errs []error
	var done []RevertChange
	for i := len(rf.Changes) - 1; i >= 0; i-- {
		c := rf.Changes[i]
		if err := os.WriteFile(e.path(c.Path), []byte(c.Old+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.Path, err))
			continue
		}
		done = append(done, c)
	}
	return done, errors.Join(errs...)
}

// writeSynced writes v as JSON to path and syncs file and directory, so
// the record survives a crash right after.
func writeSynced(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
