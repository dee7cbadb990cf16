package tune

import (
	"fmt"
	"os"
	"sync"
	"time"
)

// ProfileFile is a profile kept in a JSON file and re-read when the file
// changes, so that a running datanode takes a new profile on its next
// data connection without a restart (the GA switches profiles this way
// between measurements).
type ProfileFile struct {
	path string
	host Host

	mu      sync.Mutex // guards the fields below
	cur     Profile
	modTime time.Time
	size    int64
}

// OpenProfileFile loads and validates the profile at path.
func OpenProfileFile(h Host, path string) (*ProfileFile, error) {
	pf := &ProfileFile{path: path, host: h}
	if _, err := pf.Current(); err != nil {
		return nil, err
	}
	return pf, nil
}

// Current returns the profile in force: the file's if it changed and is
// valid. On a read or validation error it keeps the last good profile and
// returns the error too, so the caller can log it and carry on.
func (pf *ProfileFile) Current() (Profile, error) {
	pf.mu.Lock()
	defer pf.mu.Unlock()
	st, err := os.Stat(pf.path)
	if err != nil {
		return pf.cur, fmt.Errorf("net profile %s: %w", pf.path, err)
	}
	if pf.cur.Name != "" && st.ModTime().Equal(pf.modTime) && st.Size() == pf.size {
		return pf.cur, nil
	}
	b, err := os.ReadFile(pf.path)
	if err != nil {
		return pf.cur, fmt.Errorf("net profile %s: %w", pf.path, err)
	}
	p, err := DecodeProfile(pf.host, b)
	if err != nil {
		return pf.cur, fmt.Errorf("net profile %s: %w", pf.path, err)
	}
	pf.cur, pf.modTime, pf.size = p, st.ModTime(), st.Size()
	return p, nil
}

// WriteProfileFile replaces the profile file atomically (a datanode never
// reads half a file).
func WriteProfileFile(path string, p Profile) error {
	return writeSynced(path, p)
}
