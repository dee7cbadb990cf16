//go:build !linux

package journal

import "errors"

// FDFlags is Linux-only (/proc).
func FDFlags(pid, fd int) (int, error) { return 0, errors.New("descriptor flags: Linux only") }
