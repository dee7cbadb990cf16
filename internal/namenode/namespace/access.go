package namespace

// CheckAccess reports whether c may act on path with want (rwx bits), by
// the rules every operation applies (HDFS's FileSystem.access, WebHDFS
// CHECKACCESS): search on every directory on the way, then want on the
// path itself.
func (t *Tree) CheckAccess(c Caller, path string, want uint16) error {
	return t.CheckAccessFor(c, "checkAccess", path, want)
}

// CheckAccessFor is CheckAccess with errors naming op.
func (t *Tree) CheckAccessFor(c Caller, op, path string, want uint16) error {
	n, err := t.Stat(c, op, path)
	if err != nil {
		return err
	}
	return t.check(op, n.Path(), c, n, want)
}
