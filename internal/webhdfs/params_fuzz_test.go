package webhdfs

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

// FuzzParseQuery: any query string either parses within the bounds or is
// refused with an IllegalArgumentException; the typed getters never
// panic and keep their ranges; what parses re-encodes to the same values.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"op=CREATE&overwrite=true&permission=644&replication=3&blocksize=134217728",
		"op=OPEN&offset=10&length=-1&user.name=alice&doas=bob",
		"op=LISTSTATUS_BATCH&startAfter=d%20x&STARTAFTER=y",
		"op=SETXATTR&xattr.name=user.a&xattr.value=0x00ff&flag=CREATE,REPLACE",
		"permission=1777&offset=9223372036854775807&replication=32768",
		"a=%zz&b", "op=%00&user.name=..", strings.Repeat("a=b&", 300),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := ParseQuery(raw)
		if err != nil {
			if re, ok := err.(*RemoteException); !ok || re.Status != 400 {
				t.Fatalf("ParseQuery(%q) error %v is not a 400 RemoteException", raw, err)
			}
			return
		}
		if len(raw) > MaxQueryLen {
			t.Fatalf("accepted a %d-byte query", len(raw))
		}
		for _, name := range []string{"op", "permission", "offset", "length", "replication", "overwrite", "user.name", "doas", "startafter", "xattr.value"} {
			for _, v := range p.All(name) {
				if len(v) > MaxValueLen {
					t.Fatalf("%s: kept a %d-byte value", name, len(v))
				}
			}
			if perm, err := p.Permission(name, 0o644); err == nil && perm > 0o1777 {
				t.Fatalf("%s: permission %o out of range", name, perm)
			}
			if n, err := p.Long(name, 0, -1); err == nil && n < -1 {
				t.Fatalf("%s: long %d below its minimum", name, n)
			}
			if n, err := p.Short(name, 1, 1); err == nil && (n < 1 || n > 32767) {
				t.Fatalf("%s: short %d out of range", name, n)
			}
			_, _ = p.Bool(name, false)
			if u, err := p.User(name); err == nil && u != "" && !userPattern.MatchString(u) {
				t.Fatalf("%s: user %q passed the pattern check", name, u)
			}
			if v := p.Str(name); v != "" {
				if cp, err := CleanPath(name, v); err == nil && (!strings.HasPrefix(cp, "/") || len(cp) > MaxPathLen || strings.Contains(cp, "/../")) {
					t.Fatalf("CleanPath(%q) = %q", v, cp)
				}
				if b, err := DecodeXAttr(v); err == nil && len(b) > len(v) {
					t.Fatalf("DecodeXAttr(%q) grew to %d bytes", v, len(b))
				}
			}
		}
		again, err := ParseQuery(p.Encode())
		if err != nil {
			t.Fatalf("re-encoded query %q does not parse: %v", p.Encode(), err)
		}
		for k, vs := range p.v {
			if strings.Join(again.All(k), "\x00") != strings.Join(vs, "\x00") {
				t.Fatalf("%s: %q re-parsed as %q", k, vs, again.All(k))
			}
		}
	})
}

func TestXAttrCodec(t *testing.T) {
	for _, v := range [][]byte{{}, []byte("blue"), {0, 0xff, 0x10}} {
		for _, enc := range []string{"text", "hex", "base64"} {
			s, err := EncodeXAttr(v, enc)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeXAttr(s)
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("%s %q -> %q -> %q, %v", enc, v, s, got, err)
			}
		}
	}
	if _, err := EncodeXAttr(nil, "rot13"); err == nil {
		t.Fatal("unknown encoding accepted")
	}
	if _, err := DecodeXAttr("0xzz"); err == nil {
		t.Fatal("bad hex accepted")
	}
}

func TestFsAction(t *testing.T) {
	for s, want := range map[string]uint16{"rwx": 7, "r--": 4, "-w-": 2, "--x": 1, "---": 0, "r-x": 5} {
		if got, ok := fsAction(s); !ok || got != want {
			t.Fatalf("fsAction(%q) = %d %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "rw", "rwxx", "xwr", "RWX"} {
		if _, ok := fsAction(s); ok {
			t.Fatalf("fsAction(%q) accepted", s)
		}
	}
	if _, err := url.ParseQuery("a=%zz"); err == nil {
		t.Fatal("url.ParseQuery accepts bad escapes; the malformed-query case is untested")
	}
}
