package fsshell

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"smarth/internal/client"
	"smarth/internal/fsattr"
)

// Getfacl prints ACLs as hdfs dfs -getfacl: "# file:", "# owner:",
// "# group:", "# flags:" for a sticky bit, the entries (with
// "#effective:" where the mask takes something away) and a blank line.
func (s *Shell) Getfacl(ctx context.Context, args []string, recursive bool) error {
	return s.eachPath(ctx, "getfacl", args, func(p string) error { return s.getfacl(ctx, p, recursive) })
}

func (s *Shell) getfacl(ctx context.Context, p string, recursive bool) error {
	st, err := s.FS.Stat(ctx, p)
	if err != nil {
		return fail("getfacl", p, err)
	}
	acl, err := s.FS.GetACLStatus(ctx, p)
	if err != nil {
		return fail("getfacl", p, err)
	}
	fmt.Fprintf(s.Out, "# file: %s\n# owner: %s\n# group: %s\n", p, acl.Owner, acl.Group)
	if acl.Perm&fsattr.StickyBit != 0 {
		flag := "T"
		if acl.Perm&1 != 0 {
			flag = "t"
		}
		fmt.Fprintf(s.Out, "# flags: --%s\n", flag)
	}
	for _, l := range fsattr.ACLString(acl.Perm, acl.Entries) {
		fmt.Fprintln(s.Out, l)
	}
	fmt.Fprintln(s.Out)
	if !recursive || !st.IsDir {
		return nil
	}
	ents, err := s.FS.List(ctx, p)
	if err != nil {
		return fail("getfacl", p, err)
	}
	for _, e := range ents {
		if err := s.getfacl(ctx, e.Path, true); err != nil {
			return err
		}
	}
	return nil
}

// SetfaclOptions are hdfs dfs -setfacl's: exactly one of -b, -k, -m, -x,
// --set (SPEC with -m, -x and --set), and -R.
type SetfaclOptions struct {
	RemoveAll     bool   // -b: remove everything but the base entries
	RemoveDefault bool   // -k
	Modify        string // -m SPEC
	Remove        string // -x SPEC
	Set           string // --set SPEC
	Recursive     bool   // -R
}

// Setfacl changes ACLs as hdfs dfs -setfacl.
func (s *Shell) Setfacl(ctx context.Context, args []string, o SetfaclOptions) error {
	n := 0
	for _, on := range []bool{o.RemoveAll, o.RemoveDefault, o.Modify != "", o.Remove != "", o.Set != ""} {
		if on {
			n++
		}
	}
	if n != 1 {
		return &Error{Cmd: "setfacl", Err: fmt.Errorf("%w: give exactly one of -b, -k, -m SPEC, -x SPEC and --set SPEC", fs.ErrInvalid)}
	}
	var spec []client.ACLEntry
	var err error
	switch {
	case o.Modify != "":
		spec, err = client.ParseACLSpec(o.Modify, true)
	case o.Set != "":
		spec, err = client.ParseACLSpec(o.Set, true)
	case o.Remove != "":
		spec, err = client.ParseACLSpec(o.Remove, false)
	}
	if err != nil {
		return &Error{Cmd: "setfacl", Err: fmt.Errorf("%w: %v", fs.ErrInvalid, err)}
	}
	return s.eachPath(ctx, "setfacl", args, func(p string) error { return s.setfacl(ctx, p, o, spec) })
}

func (s *Shell) setfacl(ctx context.Context, p string, o SetfaclOptions, spec []client.ACLEntry) error {
	st, err := s.FS.Stat(ctx, p)
	if err != nil {
		return fail("setfacl", p, err)
	}
	// As Hadoop's -R: files get the spec without its default entries.
	sp := spec
	if !st.IsDir {
		sp = nil
		for _, e := range spec {
			if e.Scope != fsattr.ScopeDefault {
				sp = append(sp, e)
			}
		}
	}
	switch {
	case o.RemoveAll:
		err = s.FS.RemoveACL(ctx, p)
	case o.RemoveDefault:
		if st.IsDir || !o.Recursive {
			err = s.FS.RemoveDefaultACL(ctx, p)
		}
	case len(sp) == 0:
		// a default-only spec on a file below -R: nothing to do there
	case o.Modify != "":
		err = s.FS.ModifyACLEntries(ctx, p, sp)
	case o.Remove != "":
		err = s.FS.RemoveACLEntries(ctx, p, sp)
	case o.Set != "":
		err = s.FS.SetACL(ctx, p, sp)
	}
	if err != nil {
		return fail("setfacl", p, err)
	}
	if !o.Recursive || !st.IsDir {
		return nil
	}
	ents, err := s.FS.List(ctx, p)
	if err != nil {
		return fail("setfacl", p, err)
	}
	for _, e := range ents {
		if err := s.setfacl(ctx, e.Path, o, spec); err != nil {
			return err
		}
	}
	return nil
}

// CreateSnapshot is hdfs dfs -createSnapshot DIR [NAME]: it prints
// "Created snapshot PATH".
func (s *Shell) CreateSnapshot(ctx context.Context, dir, name string) error {
	p, err := s.Resolve(dir)
	if err != nil {
		return fail("createSnapshot", dir, err)
	}
	sp, err := s.FS.CreateSnapshot(ctx, p, name)
	if err != nil {
		return fail("createSnapshot", p, err)
	}
	fmt.Fprintf(s.Out, "Created snapshot %s\n", sp)
	return nil
}

// DeleteSnapshot is hdfs dfs -deleteSnapshot DIR NAME.
func (s *Shell) DeleteSnapshot(ctx context.Context, dir, name string) error {
	p, err := s.Resolve(dir)
	if err != nil {
		return fail("deleteSnapshot", dir, err)
	}
	return fail("deleteSnapshot", p, s.FS.DeleteSnapshot(ctx, p, name))
}

// RenameSnapshot is hdfs dfs -renameSnapshot DIR OLD NEW.
func (s *Shell) RenameSnapshot(ctx context.Context, dir, from, to string) error {
	p, err := s.Resolve(dir)
	if err != nil {
		return fail("renameSnapshot", dir, err)
	}
	return fail("renameSnapshot", p, s.FS.RenameSnapshot(ctx, p, from, to))
}

// PrintSnapshotDiff prints a diff as hdfs snapshotDiff does.
func PrintSnapshotDiff(w io.Writer, dir, from, to string, diff []client.DiffEntry) {
	name := func(s string) string {
		if s == "" || s == "." {
			return "current directory"
		}
		return "snapshot " + s
	}
	fmt.Fprintf(w, "Difference between %s and %s under directory %s:\n", name(from), name(to), dir)
	for _, e := range diff {
		if e.Kind == "R" {
			fmt.Fprintf(w, "R\t%s -> %s\n", e.Path, e.Target)
		} else {
			fmt.Fprintf(w, "%s\t%s\n", e.Kind, e.Path)
		}
	}
}

// PrintSnapshottableDirs prints hdfs lsSnapshottableDir's lines:
// mode, replication 0, owner, group, length 0, modification time, number
// of snapshots, snapshot quota, path.
func PrintSnapshottableDirs(w io.Writer, dirs []client.SnapshottableDir) {
	for _, d := range dirs {
		fmt.Fprintf(w, "d%s 0 %s %s 0 %s %d %d %s\n", PermString(d.Dir.Mode), d.Dir.Owner, d.Dir.Group,
			d.Dir.ModTime.Local().Format("2006-01-02 15:04"), len(d.Snapshots), d.Quota, d.Dir.Path)
	}
}

// PolicyString renders a policy as HDFS's BlockStoragePolicy.toString.
func PolicyString(p client.StoragePolicy) string {
	l := func(v []string) string { return "[" + strings.Join(v, ", ") + "]" }
	return fmt.Sprintf("BlockStoragePolicy{%s:%d, storageTypes=%s, creationFallbacks=%s, replicationFallbacks=%s}",
		p.Name, p.ID, l(p.StorageTypes), l(p.CreationFallbacks), l(p.ReplicationFallbacks))
}
