package fsshell

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io/fs"
	"strings"

	"smarth/internal/client"
)

// GetfattrOptions are hdfs dfs -getfattr's flags.
type GetfattrOptions struct {
	Name      string // -n: this attribute
	Dump      bool   // -d: all of them
	Encoding  string // -e: text (default), hex or base64
	Recursive bool   // -R
}

// Getfattr prints extended attributes as hdfs dfs -getfattr: "# file:
// PATH", then NAME=VALUE lines (a value encoded per -e, an empty value as
// the bare name).
func (s *Shell) Getfattr(ctx context.Context, args []string, o GetfattrOptions) error {
	if o.Dump == (o.Name != "") {
		return &Error{Cmd: "getfattr", Err: fmt.Errorf("%w: give exactly one of -n NAME and -d", fs.ErrInvalid)}
	}
	enc := strings.ToLower(o.Encoding)
	if enc == "" {
		enc = "text"
	}
	if enc != "text" && enc != "hex" && enc != "base64" {
		return &Error{Cmd: "getfattr", Err: fmt.Errorf("%w: Invalid/unsupported encoding option specified: %s", fs.ErrInvalid, o.Encoding)}
	}
	return s.eachPath(ctx, "getfattr", args, func(p string) error { return s.getfattr(ctx, p, o, enc) })
}

func (s *Shell) getfattr(ctx context.Context, p string, o GetfattrOptions, enc string) error {
	st, err := s.FS.Stat(ctx, p)
	if err != nil {
		return fail("getfattr", p, err)
	}
	var names []string
	if !o.Dump {
		names = []string{o.Name}
	}
	xs, err := s.FS.GetXAttrs(ctx, p, names...)
	if err != nil {
		return fail("getfattr", p, err)
	}
	fmt.Fprintf(s.Out, "# file: %s\n", p)
	for _, x := range xs {
		if len(x.Value) == 0 {
			fmt.Fprintln(s.Out, x.Name)
		} else {
			fmt.Fprintf(s.Out, "%s=%s\n", x.Name, encodeXAttrValue(x.Value, enc))
		}
	}
	if !o.Recursive || !st.IsDir {
		return nil
	}
	ents, err := s.FS.List(ctx, p)
	if err != nil {
		return fail("getfattr", p, err)
	}
	for _, e := range ents {
		if err := s.getfattr(ctx, e.Path, o, enc); err != nil {
			return err
		}
	}
	return nil
}

// encodeXAttrValue is Hadoop's XAttrCodec.encodeValue: "text" quoted,
// hex with 0x, base64 with 0s.
func encodeXAttrValue(v []byte, enc string) string {
	switch enc {
	case "hex":
		return "0x" + hex.EncodeToString(v)
	case "base64":
		return "0s" + base64.StdEncoding.EncodeToString(v)
	}
	return `"` + string(v) + `"`
}

// decodeXAttrValue is Hadoop's XAttrCodec.decodeValue: a quoted string
// is text, 0x hex, 0s base64, anything else the text itself.
func decodeXAttrValue(v string) ([]byte, error) {
	switch {
	case len(v) >= 2 && strings.HasPrefix(v, `"`) && strings.HasSuffix(v, `"`):
		return []byte(v[1 : len(v)-1]), nil
	case len(v) >= 2 && (v[:2] == "0x" || v[:2] == "0X"):
		return hex.DecodeString(v[2:])
	case len(v) >= 2 && (v[:2] == "0s" || v[:2] == "0S"):
		return base64.StdEncoding.DecodeString(v[2:])
	}
	return []byte(v), nil
}

// SetfattrOptions are hdfs dfs -setfattr's flags: -n NAME [-v VALUE] or
// -x NAME.
type SetfattrOptions struct {
	Name, Value string
	Remove      string
}

// Setfattr sets (creating or replacing, as HDFS's shell does) or removes
// an extended attribute of each path.
func (s *Shell) Setfattr(ctx context.Context, args []string, o SetfattrOptions) error {
	if (o.Name == "") == (o.Remove == "") {
		return &Error{Cmd: "setfattr", Err: fmt.Errorf("%w: give exactly one of -n NAME and -x NAME", fs.ErrInvalid)}
	}
	value, err := decodeXAttrValue(o.Value)
	if err != nil {
		return &Error{Cmd: "setfattr", Err: fmt.Errorf("%w: value %q: %v", fs.ErrInvalid, o.Value, err)}
	}
	return s.eachPath(ctx, "setfattr", args, func(p string) error {
		if o.Remove != "" {
			return fail("setfattr", p, s.FS.RemoveXAttr(ctx, p, o.Remove))
		}
		return fail("setfattr", p, s.FS.SetXAttr(ctx, p, o.Name, value, client.XAttrCreate|client.XAttrReplace))
	})
}
