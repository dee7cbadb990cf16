//go:build !linux

package journal

// Direct I/O is used on Linux only; elsewhere segments are written
// through the page cache and fdatasync'd (fsync where there is none).
func createDirect(string) (File, error) { return nil, errNoDirect }
