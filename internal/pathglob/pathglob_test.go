package pathglob

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

func TestExpandBraces(t *testing.T) {
	cases := map[string][]string{
		"/a/{x,y}/z":     {"/a/x/z", "/a/y/z"},
		"/{a,b{1,2}}":    {"/a", "/b1", "/b2"},
		"/{a/b,c}*":      {"/a/b*", "/c*"},
		"/plain":         {"/plain"},
		`/esc\{a,b\}`:    {`/esc\{a,b\}`},
		"/open{a":        {`/open\{a`},
		"/{x,x}":         {"/x"},
		"/p-{1,2}-{a,b}": {"/p-1-a", "/p-1-b", "/p-2-a", "/p-2-b"},
	}
	for in, want := range cases {
		if got := expandBraces(in); !slices.Equal(got, want) {
			t.Errorf("expandBraces(%q) = %q, want %q", in, got, want)
		}
	}
	if Has(`/a\*b`) || !Has("/a/*") || Unescape(`/a\*b`) != "/a*b" {
		t.Error("escaped glob characters")
	}
}

// memNS is a namespace of the given paths (directories implied).
type memNS map[string]bool

func newMemNS(files ...string) memNS {
	ns := memNS{"/": true}
	for _, f := range files {
		for p := f; p != "/"; p = path.Dir(p) {
			ns[p] = true
		}
	}
	return ns
}

func (ns memNS) Names(_ context.Context, dir string) ([]string, error) {
	var out []string
	for p := range ns {
		if p != "/" && path.Dir(p) == dir {
			out = append(out, path.Base(p))
		}
	}
	return out, nil
}

func (ns memNS) Exists(_ context.Context, p string) (bool, error) { return ns[p], nil }

func TestExpand(t *testing.T) {
	ns := newMemNS("/data/text/part-0", "/data/text/part-1", "/data/text/_SUCCESS", "/data/x/part-0", "/lit*eral")
	for _, c := range []struct {
		pattern string
		want    []string
	}{
		{"/data/text/part-*", []string{"/data/text/part-0", "/data/text/part-1"}},
		{"/data/*/part-0", []string{"/data/text/part-0", "/data/x/part-0"}},
		{"/data/{text,x}/part-[0]", []string{"/data/text/part-0", "/data/x/part-0"}},
		{"/data/text/part-[!0]", []string{"/data/text/part-1"}},
		{"/data/text/part-?", []string{"/data/text/part-0", "/data/text/part-1"}},
		{"/data/none*", nil},
		{"/data/text", []string{"/data/text"}},
		{"/data/missing", nil},
		{`/lit\*eral`, []string{"/lit*eral"}},
	} {
		got, err := Expand(context.Background(), ns, c.pattern)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("Expand(%q) = %q, %v; want %q", c.pattern, got, err, c.want)
		}
	}
	var bad *BadPatternError
	if _, err := Expand(context.Background(), ns, "/data/[a"); !errors.As(err, &bad) {
		t.Errorf("an unclosed [: %v, want a BadPatternError", err)
	}
	if _, err := Expand(context.Background(), ns, "data/*"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("a relative pattern: %v, want an error saying it must be absolute", err)
	}
}
