//go:build !unix

package diskperm

// CheckSocketDirs has nothing to check: unix sockets and their
// directories' modes are a unix system's.
func CheckSocketDirs(string) error { return nil }
