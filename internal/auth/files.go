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
	if err := os.WriteFile(tmp, b, mode); err != nil {
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil { // a stale tmp kept its mode
		return err
	}
	return os.Rename(tmp, path)
}
