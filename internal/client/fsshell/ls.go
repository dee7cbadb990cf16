package fsshell

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"smarth/internal/client"
)

// LsOptions are `hdfs dfs -ls`'s flags.
type LsOptions struct {
	Recursive  bool // -R: subdirectories too, depth first
	Human      bool // -h: sizes like 1.5 K
	Dirs       bool // -d: a directory as a plain entry, not its contents
	ByTime     bool // -t: newest first
	BySize     bool // -S: largest first
	Reverse    bool // -r: reverse the order
	PathOnly   bool // -C: paths only
	AccessTime bool // -u: show (and with -t sort by) access time
}

// Ls lists in HDFS's columns: permissions, replication ("-" for
// directories), owner, group, size, date, path. A directory's listing
// starts with "Found N items" unless it is empty or recursive, as HDFS.
func (s *Shell) Ls(ctx context.Context, args []string, o LsOptions) error {
	if len(args) == 0 {
		args = []string{"."} // the home directory, as HDFS
	}
	return s.eachPath(ctx, "ls", args, func(p string) error {
		st, err := s.FS.Stat(ctx, p)
		if err != nil {
			return fail("ls", p, err)
		}
		if !st.IsDir || o.Dirs {
			s.lsLines([]client.FileInfo{st}, o)
			return nil
		}
		ents, err := s.FS.List(ctx, st.Path)
		if err != nil {
			return fail("ls", p, err)
		}
		sortEntries(ents, o)
		if !o.Recursive {
			if len(ents) > 0 && !o.PathOnly {
				fmt.Fprintf(s.Out, "Found %d items\n", len(ents))
			}
			s.lsLines(ents, o)
			return nil
		}
		return s.lsTree(ctx, ents, o)
	})
}

// lsTree prints entries depth first: each directory is followed by what
// it holds, sorted the same way.
func (s *Shell) lsTree(ctx context.Context, ents []client.FileInfo, o LsOptions) error {
	for _, e := range ents {
		s.lsLines([]client.FileInfo{e}, o)
		if !e.IsDir {
			continue
		}
		sub, err := s.FS.List(ctx, e.Path)
		if err != nil {
			return fail("ls", e.Path, err)
		}
		sortEntries(sub, o)
		if err := s.lsTree(ctx, sub, o); err != nil {
			return err
		}
	}
	return nil
}

// sortEntries orders a listing as hdfs dfs -ls: by name, or with -t/-S
// by time/size alone, stable, so entries that tie keep their name order;
// -r reverses the comparison, not the list, so ties stay in name order
// (-S -r lists an empty file "dir" before an empty file "empty").
func sortEntries(ents []client.FileInfo, o LsOptions) {
	when := func(e client.FileInfo) time.Time {
		if o.AccessTime {
			return e.AccessTime
		}
		return e.ModTime
	}
	sign := 1
	if o.Reverse {
		sign = -1
	}
	slices.SortStableFunc(ents, func(a, b client.FileInfo) int {
		return strings.Compare(a.Name, b.Name)
	})
	slices.SortStableFunc(ents, func(a, b client.FileInfo) int {
		switch {
		case o.ByTime:
			return sign * when(b).Compare(when(a))
		case o.BySize:
			return sign * cmp.Compare(b.Size, a.Size)
		}
		return sign * strings.Compare(a.Name, b.Name)
	})
}

// lsLines prints entries with Hadoop's column widths: replication at
// least 3 wide, size at least 10, owner and group as wide as the widest.
func (s *Shell) lsLines(ents []client.FileInfo, o LsOptions) {
	if o.PathOnly {
		for _, e := range ents {
			fmt.Fprintln(s.Out, s.show(e.Path))
		}
		return
	}
	type row struct{ perm, repl, owner, group, size, date string }
	rows := make([]row, len(ents))
	wRepl, wOwner, wGroup, wSize := 3, 0, 0, 10
	for i, e := range ents {
		r := row{perm: typeLetter(e) + PermString(e.Mode), repl: "-", owner: e.Owner, group: e.Group, size: strconv.FormatInt(e.Size, 10)}
		if !e.IsDir {
			r.repl = strconv.Itoa(e.Replication)
		}
		if o.Human {
			r.size = HumanBytes(e.Size)
		}
		t := e.ModTime
		if o.AccessTime {
			t = e.AccessTime
		}
		r.date = t.Local().Format("2006-01-02 15:04")
		rows[i] = r
		wRepl, wOwner, wGroup, wSize = max(wRepl, len(r.repl)), max(wOwner, len(r.owner)), max(wGroup, len(r.group)), max(wSize, len(r.size))
	}
	for i, r := range rows {
		// The column after the permissions is HDFS's ACL bit: "+" when
		// the entry has an extended ACL.
		acl := " "
		if ents[i].HasACL {
			acl = "+"
		}
		fmt.Fprintf(s.Out, "%s%s%*s %-*s %-*s %*s %s %s\n", r.perm, acl, wRepl, r.repl, wOwner, r.owner, wGroup, r.group, wSize, r.size, r.date, s.show(ents[i].Path))
	}
}

func typeLetter(e client.FileInfo) string {
	if e.IsDir {
		return "d"
	}
	return "-"
}

// PermString is mode as HDFS prints permissions: "rwxr-x---", with the
// sticky bit as "t" in the others' execute place ("T" without execute).
func PermString(mode fs.FileMode) string {
	const rwx = "rwxrwxrwx"
	b := []byte("---------")
	for i := range 9 {
		if mode&(1<<(8-i)) != 0 {
			b[i] = rwx[i]
		}
	}
	if mode&fs.ModeSticky != 0 {
		if b[8] == 'x' {
			b[8] = 't'
		} else {
			b[8] = 'T'
		}
	}
	return string(b)
}
