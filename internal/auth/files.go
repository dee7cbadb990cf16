package auth

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Secret files (HMAC keys, credentials, TLS private keys) are read and
// written here, by the auth and pki packages alike: anyone who can read
// one can act with it, so a file others can read is refused, and a
// replacement never passes through a wider mode.

// maxSecretFile bounds what ReadPrivateFile reads: keys and credentials
// are a few hundred bytes.
const maxSecretFile = 1 << 20

// ReadPrivateFile reads path, refusing it when its group or others may
// read or write it; what names the file in that error ("key file", "token
// file"). The mode is checked on the open file, not on the name.
func ReadPrivateFile(path, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s %s has mode %#o; it must be readable by its owner only (chmod 600)", what, path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSecretFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSecretFile {
		return nil, fmt.Errorf("%s %s is larger than %d bytes", what, path, maxSecretFile)
	}
	return b, nil
}

// WriteFileAtomic replaces path with b under mode: written to path.tmp,
// which is given mode even if a stale one had another, then renamed over
// path. Missing parent directories are made with dirMode.
func WriteFileAtomic(path string, b []byte, mode, dirMode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	// A stale tmp kept its mode; the bytes must be on disk before the
	// rename makes them the file, or a power loss can leave an empty file
	// under the real name (which its reader then refuses at start).
	_, err = f.Write(b)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename itself is durable once the directory is synced.
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
