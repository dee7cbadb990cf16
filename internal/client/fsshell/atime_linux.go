package fsshell

import (
	"io/fs"
	"syscall"
	"time"
)

// accessTime is a local file's access time (put -p keeps it).
func accessTime(info fs.FileInfo) time.Time {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return time.Unix(st.Atim.Unix())
	}
	return info.ModTime()
}
