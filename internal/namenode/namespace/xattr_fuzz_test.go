package namespace

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzXAttr sends an arbitrary setXAttr (name, value, flags, caller) and
// then a getXAttrs and removeXAttr of a second arbitrary name, as the RPCs
// would, to a file that already holds user.a and trusted.t. Nothing may
// panic, and the namespace rules must hold whatever the bytes: only
// names with a known namespace prefix are stored, lower-cased prefix;
// nobody sets system/security/raw, only the superuser trusted; the size
// and count limits hold; flags are obeyed; what is read back is what was
// written; bob (no write access) changes nothing.
func FuzzXAttr(f *testing.F) {
	f.Add("user.color", []byte("red"), uint8(XAttrCreate), uint8(0), "USER.color")
	f.Add("User.a", []byte("x"), uint8(XAttrReplace), uint8(0), "user.a")
	f.Add("user.a", []byte(nil), uint8(XAttrCreate), uint8(0), "user.a")
	f.Add("trusted.x", []byte("1"), uint8(XAttrCreate|XAttrReplace), uint8(2), "trusted.t")
	f.Add("trusted.x", []byte("1"), uint8(XAttrCreate), uint8(0), "trusted.x")
	f.Add("system.x", []byte("1"), uint8(XAttrCreate), uint8(2), "system.x")
	f.Add("raw.x", []byte("1"), uint8(XAttrCreate), uint8(2), "security.x")
	f.Add("user.", []byte("1"), uint8(XAttrCreate), uint8(0), ".user")
	f.Add("user.big", bytes.Repeat([]byte{'v'}, 60), uint8(XAttrCreate), uint8(0), "user.big")
	f.Add("user.b", []byte("1"), uint8(XAttrCreate), uint8(1), "user.a")
	f.Add("user.\x00\xff/..", []byte{0}, uint8(0xff), uint8(0), "")
	f.Fuzz(func(t *testing.T, name string, value []byte, flags, who uint8, name2 string) {
		const maxSize, maxCount = 64, 4
		tr := New(Config{Superuser: "hdfs", Permissions: true, MaxXAttrsPerInode: maxCount, MaxXAttrSize: maxSize})
		alice, bob := Caller{User: "alice"}, Caller{User: "bob"}
		c := []Caller{alice, bob, root}[int(who)%3]
		if err := tr.Mkdirs(root, "/home", 0o777, 0o755, true, 1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := tr.Create(alice, "/home/f", CreateOptions{Perm: 0o644, Replication: 1, BlockSize: 1 << 20, Writer: Writer{Client: "c"}}, 2); err != nil {
			t.Fatal(err)
		}
		if err := tr.SetXAttr(alice, "/home/f", "user.a", []byte("A"), XAttrCreate); err != nil {
			t.Fatal(err)
		}
		if err := tr.SetXAttr(root, "/home/f", "trusted.t", []byte("T"), XAttrCreate); err != nil {
			t.Fatal(err)
		}
		model := map[string]string{"user.a": "A", "trusted.t": "T"}

		norm := NormalizeXAttrName(name)
		err := tr.SetXAttr(c, "/home/f", name, value, XAttrFlag(flags))
		if err == nil {
			ns, _, _ := strings.Cut(norm, ".")
			_, existed := model[norm]
			switch {
			case norm == "":
				t.Fatalf("set accepted the name %q", name)
			case ns != "user" && !(ns == "trusted" && c.User == root.User):
				t.Fatalf("%s set %q", c.User, norm)
			case c.User == bob.User:
				t.Fatalf("bob, without write access, set %q", norm)
			case len(norm)+len(value) > maxSize:
				t.Fatalf("%d-byte attribute accepted under a %d-byte limit", len(norm)+len(value), maxSize)
			case existed && XAttrFlag(flags)&XAttrReplace == 0, !existed && XAttrFlag(flags)&XAttrCreate == 0:
				t.Fatalf("set %q (existing: %v) with flags %b", norm, existed, flags)
			}
			model[norm] = string(value)
		} else if kindOf(err) == 0 {
			t.Fatalf("set %q: untyped error %v", name, err)
		}
		if len(model) > maxCount {
			t.Fatalf("%d attributes under a limit of %d", len(model), maxCount)
		}
		all, err := tr.GetXAttrs(root, "/home/f", nil)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, x := range all {
			got[x.Name] = string(x.Value)
		}
		if len(got) != len(model) {
			t.Fatalf("stored %v, want %v", got, model)
		}
		for k, v := range model {
			if got[k] != v {
				t.Fatalf("stored %v, want %v", got, model)
			}
		}

		// A read of name2 answers what the model holds or refuses.
		norm2 := NormalizeXAttrName(name2)
		xs, err := tr.GetXAttrs(c, "/home/f", []string{name2})
		if err == nil {
			v, ok := model[norm2]
			if len(xs) != 1 || !ok || xs[0].Name != norm2 || string(xs[0].Value) != v {
				t.Fatalf("get %q gave %v, model %v", name2, xs, model)
			}
			if strings.HasPrefix(norm2, "trusted.") && c.User != root.User {
				t.Fatalf("%s read %q", c.User, norm2)
			}
		}
		names, err := tr.ListXAttrs(c, "/home/f")
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(names) {
			t.Fatalf("list not in name order: %v", names)
		}
		if err := tr.RemoveXAttr(c, "/home/f", name2); err == nil {
			if _, ok := model[norm2]; !ok || c.User == bob.User {
				t.Fatalf("%s removed %q, model %v", c.User, name2, model)
			}
			if _, err := tr.GetXAttrs(root, "/home/f", []string{norm2}); kindOf(err) != Precondition {
				t.Fatalf("%q still there after its removal: %v", norm2, err)
			}
		}
	})
}
