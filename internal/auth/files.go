package auth

import (
	"fmt"
	"io"
	"os"
)

// Secret files (HMAC keys, credentials, TLS private keys) are read here,
// by the auth and pki packages alike: anyone who can read one can act with
// it, so a file others can read is refused. They are written with
// atomicfile, whose replacement never passes through a wider mode.

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
