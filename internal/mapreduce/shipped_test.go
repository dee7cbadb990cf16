package mapreduce

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestShippedOf(t *testing.T) {
	got, err := ShippedOf(map[string]string{
		ParamCacheFiles:    "/u/a/.staging/0/mapper.py#mapper.py, /data/dict.txt",
		ParamCacheArchives: "/u/a/libs.zip#libs",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Shipped{{"/u/a/.staging/0/mapper.py", "mapper.py", false}, {"/data/dict.txt", "dict.txt", false}, {"/u/a/libs.zip", "libs", true}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []struct{ key, val, want string }{
		{ParamCacheFiles, "/a#../../etc/x", "must not contain '/'"},
		{ParamCacheFiles, "/a#..", "not a file name"},
		{ParamCacheFiles, "/a#.smarth", "must not start with '.'"},
		{ParamCacheFiles, "rel/a", "not an absolute DFS path"},
		{ParamCacheFiles, "/x/a,/y/a", "would both be"},
		{ParamCacheArchives, "/x/a.zip#a", ""}, // fine alone
		{ParamCacheFiles, strings.Repeat("/f,", MaxShipped+1), "at most"},
	} {
		params := map[string]string{bad.key: bad.val}
		if bad.want == "" {
			if _, err := ShippedOf(params); err != nil {
				t.Errorf("%s=%q: %v", bad.key, bad.val, err)
			}
			continue
		}
		if bad.want == "at most" { // distinct names, one too many
			var l []string
			for i := range MaxShipped + 1 {
				l = append(l, fmt.Sprintf("/f%d", i))
			}
			params[bad.key] = strings.Join(l, ",")
		}
		_, err := ShippedOf(params)
		var pe *ParamError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s=%q: got %v, want a ParamError saying %q", bad.key, bad.val, err, bad.want)
		}
	}
}
