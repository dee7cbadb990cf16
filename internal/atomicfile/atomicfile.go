// Package atomicfile replaces a small file whole: a reader, or the machine
// after a crash, finds the old contents or the new, never a mix, a torn
// tail or an empty file under the real name.
//
// What it decides: the recipe, once for every state, ready, key, token and
// record file that is rewritten in place (write a temporary file in the
// same directory, give it its final mode, fsync it, rename it over the
// name, fsync the directory), and that a key written 0600 is never, even
// for a moment, readable by others.
//
// What it leaves to others: making the parent directory (its mode is the
// caller's: 0700 for keys), what the bytes are, and files that grow or are
// written in place on purpose: the namenode's edit-log segments and images
// (namenode/journal: preallocated segments, its own FS interface and
// crash tests) and the datanode's block and VERSION files (written through
// the store's vfs so that its fault-injecting file system sees them).
package atomicfile

import (
	"os"
	"path/filepath"
)

// Write replaces path with data under mode (exactly mode, whatever the
// umask or a stale file's mode). The parent directory must exist. On error
// path is untouched and the temporary file is removed.
func Write(path string, data []byte, mode os.FileMode) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// A unique name in the same directory: the rename stays within one
	// file system, and two writers do not share a temporary file. It is
	// created 0600, so a key is never readable by others before Chmod.
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	// The bytes must be on disk before the rename makes them the file, or
	// a power loss can leave an empty file under the real name.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename itself is durable once the directory is synced.
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
