//go:build !unix

package journal

// LockDir is a no-op where flock is not available.
func LockDir(dir string) (release func() error, err error) {
	return func() error { return nil }, nil
}
