package namespace

// KeepTime as a modification or access time leaves that time as it is
// (HDFS setTimes takes -1 for "do not change").
const KeepTime int64 = -1

// SetTimes sets the modification and/or access time (unix ms; KeepTime
// leaves one alone) of a file or directory. As in HDFS the caller needs
// write access to the inode itself, and times may go backwards: tools
// restore old times with it (cp -p, put -p).
func (t *Tree) SetTimes(c Caller, path string, mtime, atime int64) (*INode, error) {
	const op = "setTimes"
	if mtime < KeepTime || atime < KeepTime {
		return nil, errorf(op, path, Invalid, "times must be >= 0 (or -1 to keep one): mtime %d, atime %d", mtime, atime)
	}
	n, err := t.Stat(c, op, path)
	if err != nil {
		return nil, err
	}
	if err := t.check(op, n.Path(), c, n, Write); err != nil {
		return nil, err
	}
	setTimes(n, mtime, atime)
	return n, nil
}

// TouchAccess sets a file's access time when a reader opens it. It is the
// namenode's own bookkeeping (the reader was already checked for read
// access), so it takes no caller.
func (t *Tree) TouchAccess(path string, atime int64) (*INode, error) {
	n, err := t.Lookup(path)
	if err != nil {
		return nil, err
	}
	setTimes(n, KeepTime, atime)
	return n, nil
}

func setTimes(n *INode, mtime, atime int64) {
	if mtime != KeepTime {
		n.MTime = mtime
	}
	if atime != KeepTime {
		n.ATime = atime
	}
}

// AccessTimeDue says whether opening a file whose access time is atime at
// now should record a new access time, with HDFS's precision rule
// (dfs.namenode.accesstime.precision): only when the recorded time is
// older than precision, so that reads do not log an edit each; a precision
// of 0 turns access times off.
func AccessTimeDue(atime, now, precision int64) bool {
	return precision > 0 && now > atime+precision
}
