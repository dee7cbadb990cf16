//go:build unix

package diskperm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// CheckSocketDirs refuses a socket path any of whose directories, from
// the root down, a user other than root and this process's could write:
// such a user could replace the socket with one of their own and be
// asked for every local read's block token. These are HDFS's rules
// (DomainSocket's path check), with its messages, but for one case: a
// root-owned world-writable directory with the sticky bit (/tmp) is
// accepted, because no other user can rename or remove what this user
// made in it, and the next directory must then be this user's or root's.
// Symbolic links are resolved first, so the directories checked are the
// ones the socket really lives in.
func CheckSocketDirs(path string) error {
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return err
	}
	euid := os.Geteuid()
	check := "/"
	for _, part := range append([]string{""}, strings.Split(strings.TrimPrefix(dir, "/"), "/")...) {
		check = filepath.Join(check, part)
		var st syscall.Stat_t
		if err := syscall.Stat(check, &st); err != nil {
			return fmt.Errorf("failed to stat a path component: '%s': %w", check, err)
		}
		mode := st.Mode & 0o777
		sticky := st.Mode&syscall.S_ISVTX != 0
		switch {
		case mode&0o002 != 0 && !(sticky && st.Uid == 0):
			return fmt.Errorf("the path component: '%s' in '%s' is world-writable. Its permissions are 0%03o. Please fix this or select a different socket path",
				check, path, mode)
		case mode&0o020 != 0 && st.Gid != 0 && !(sticky && st.Uid == 0):
			return fmt.Errorf("the path component: '%s' in '%s' is group-writable, and the group is not root. Its permissions are 0%03o, and it is owned by gid %d. Please fix this or select a different socket path",
				check, path, mode, st.Gid)
		case st.Uid != 0 && int(st.Uid) != euid:
			// Stricter than HDFS, which lets it pass when the owner's
			// write bit is off: the owner can turn it on at will.
			return fmt.Errorf("the path component: '%s' in '%s' is owned by a user who is not root and not you. Your effective user id is %d; the path is owned by user id %d, and its permissions are 0%03o. Please fix this or select a different socket path",
				check, path, euid, st.Uid, mode)
		}
	}
	return nil
}
