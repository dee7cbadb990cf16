package fsshell

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path"
	"strings"

	"smarth/internal/client"
	"smarth/internal/pathglob"
)

// defaultNameNodePort is the port a URI without one means, as HDFS's
// 8020.
const defaultNameNodePort = "8020"

// SplitURI splits "hdfs://host:port/p" or "smarth://host:port/p" into the
// namenode address ("" when the URI names none, as in hdfs:///p) and the
// path. "hdfs" is accepted so that paths copied from Hadoop scripts work
// unchanged. A plain path comes back as it is, with no address; any other
// scheme (file://, s3a://, webhdfs://) is an error rather than a path
// silently taken as a file name.
func SplitURI(arg string) (addr, p string, err error) {
	i := strings.Index(arg, "://")
	if i <= 0 || strings.ContainsAny(arg[:i], "/*?[{") {
		return "", arg, nil
	}
	scheme := strings.ToLower(arg[:i])
	if scheme != "hdfs" && scheme != "smarth" {
		return "", "", fmt.Errorf("%w: %s: no file system for scheme %q (want hdfs:// or smarth://)", fs.ErrInvalid, arg, scheme)
	}
	rest := arg[i+3:]
	auth, p := rest, "/"
	if j := strings.IndexByte(rest, '/'); j >= 0 {
		auth, p = rest[:j], rest[j:]
	}
	if auth == "" {
		return "", p, nil
	}
	if _, _, err := net.SplitHostPort(auth); err != nil {
		auth = net.JoinHostPort(strings.Trim(auth, "[]"), defaultNameNodePort)
	}
	return auth, p, nil
}

// uriPrefix is the "scheme://authority" of an hdfs:// or smarth:// URI
// as typed ("hdfs://nn:8020", "hdfs://" for hdfs:///p), "" for a plain
// path.
func uriPrefix(arg string) string {
	_, p, err := SplitURI(arg)
	switch {
	case err != nil || p == arg: // not a URI
		return ""
	case strings.HasSuffix(arg, p):
		return arg[:len(arg)-len(p)]
	default: // "hdfs://nn", whose path "/" was not typed
		return arg
	}
}

// show is how a namespace path is printed: under the URI it was given
// as, or relative to the home directory when it was given relative.
func (s *Shell) show(p string) string {
	if s.relTo != "" {
		if p == s.relTo {
			return "."
		}
		if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(s.relTo, "/")+"/"); ok {
			return rel
		}
	}
	return s.shown + p
}

// qualify is p as a fully qualified URI (hdfs://nn:8020/p), as HDFS
// prints a path in some messages: under the URI the argument gave, else
// the file system's.
func (s *Shell) qualify(p string) string {
	if s.shown != "" {
		return s.shown + p
	}
	return s.URI + p
}

// relativeArg says whether a path argument is relative (to the home
// directory), as typed.
func relativeArg(arg string) bool {
	_, p, err := SplitURI(arg)
	return err == nil && !strings.HasPrefix(p, "/")
}

// NameNodeOf is the namenode the URIs among args name, "" if none does.
// One command talks to one namenode, so two different ones are an error.
func NameNodeOf(args []string) (string, error) {
	addr := ""
	for _, a := range args {
		u, _, err := SplitURI(a)
		if err != nil || u == "" {
			continue // bad schemes are reported by the command, on the path
		}
		if addr != "" && addr != u {
			return "", fmt.Errorf("paths name two namenodes, %s and %s; a command works with one", addr, u)
		}
		addr = u
	}
	return addr, nil
}

// home is the directory relative paths resolve against: Home, else
// /user/<the client's user>, as HDFS's home directory.
func (s *Shell) home() string {
	if s.Home != "" {
		return s.Home
	}
	return "/user/" + s.FS.User()
}

// Resolve makes arg an absolute, clean namespace path: the scheme and
// namenode of a URI are dropped (the command was pointed at that namenode
// already, see NameNodeOf), a relative path is taken from the home
// directory. Glob characters are left in place.
func (s *Shell) Resolve(arg string) (string, error) {
	_, p, err := SplitURI(arg)
	if err != nil {
		return "", err
	}
	if p == "" {
		p = "."
	}
	if !path.IsAbs(p) {
		p = path.Join(s.home(), p)
	}
	return path.Clean(p), nil
}

// Target resolves a command's destination argument and applies hdfs
// dfs's rule for one that does not exist (CommandWithDestination): its
// parent must exist, and an argument ending in "/" (or "." or "..") names
// a directory, which must then exist itself. Without it "put a.txt
// /newdir/" made a file /newdir and "put a.txt /n2/sub" made /n2 on the
// way, where hdfs dfs says "No such file or directory".
func (s *Shell) Target(ctx context.Context, op, arg string) (string, error) {
	dst, err := s.Resolve(arg)
	if err != nil {
		return "", fail(op, arg, err)
	}
	if _, err := s.FS.Stat(ctx, dst); err == nil {
		return dst, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fail(op, arg, err)
	}
	// HDFS names the missing destination a second time, fully
	// qualified: "put: `/n/': No such file or directory: `hdfs://nn:8020/n'".
	s.shown = uriPrefix(arg)
	missing := &Error{Cmd: op, Path: arg, Err: fs.ErrNotExist, Qualified: s.qualify(dst)}
	_, p, _ := SplitURI(arg)
	if base := p[strings.LastIndex(p, "/")+1:]; base == "" || base == "." || base == ".." {
		return "", missing // a directory that is not there
	}
	st, err := s.FS.Stat(ctx, path.Dir(dst))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", missing
	case err != nil:
		return "", fail(op, arg, err)
	case !st.IsDir:
		return "", fail(op, arg, client.ErrNotDir)
	}
	return dst, nil
}

// Expand resolves arg and expands its glob against the namespace, as
// `hdfs dfs` does for every path argument. A pattern that matches nothing
// is "No such file or directory"; a path without glob characters comes
// back as it is, whether or not it exists (the command says).
func (s *Shell) Expand(ctx context.Context, arg string) ([]string, error) {
	p, err := s.Resolve(arg)
	if err != nil {
		return nil, err
	}
	if !pathglob.Has(p) {
		return []string{pathglob.Unescape(p)}, nil
	}
	matches, err := s.glob(ctx, p)
	if err != nil {
		return nil, err
	}
	if len(matches) == 0 {
		return nil, &client.PathError{Op: "glob", Path: arg, Kind: fs.ErrNotExist}
	}
	return matches, nil
}

// ExpandAll expands every arg; the first that fails is the error, naming
// that arg.
func (s *Shell) ExpandAll(ctx context.Context, cmd string, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		ps, err := s.Expand(ctx, a)
		if err != nil {
			return nil, fail(cmd, a, err)
		}
		out = append(out, ps...)
	}
	return out, nil
}

// eachPath runs f on every path the args expand to. A failure is reported
// on Err and the rest go on, as `hdfs dfs` does; with a single path the
// error itself is returned. An error about the resolved form of an arg
// names the arg as the user typed it ("ls: `data': No such file or
// directory"), the way HDFS names paths.
func (s *Shell) eachPath(ctx context.Context, cmd string, args []string, f func(p string) error) error {
	return s.eachPathOpt(ctx, cmd, args, false, f)
}

// eachPathOpt is eachPath; with ignoreMissing a glob without a match is
// no error (rm -f).
func (s *Shell) eachPathOpt(ctx context.Context, cmd string, args []string, ignoreMissing bool, f func(p string) error) error {
	var errs []error
	runs := 0
	for _, a := range args {
		s.shown = uriPrefix(a)
		s.relTo = ""
		if relativeArg(a) {
			s.relTo = s.home()
		}
		ps, err := s.Expand(ctx, a)
		if ignoreMissing && errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fail(cmd, a, err))
			runs++
			continue
		}
		for _, p := range ps {
			runs++
			if err := f(p); err != nil {
				errs = append(errs, nameArg(err, p, a))
			}
		}
	}
	if runs == 1 && len(errs) == 1 {
		return errs[0]
	}
	for _, err := range errs {
		fmt.Fprintln(s.Err, err)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d paths failed: %w", len(errs), runs, ErrSome)
	}
	return nil
}

// nameArg puts the arg as typed in place of its resolved path p in a
// shell error.
func nameArg(err error, p, arg string) error {
	var se *Error
	if errors.As(err, &se) && se.Path == p && !pathglob.Has(arg) {
		c := *se
		c.Path = arg
		return &c
	}
	return err
}
