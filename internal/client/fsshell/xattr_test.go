package fsshell_test

import (
	"context"
	"strings"
	"testing"

	"smarth/internal/client/fsshell"
)

// TestGetfattrSetfattr: hdfs dfs -setfattr value forms and -getfattr
// output with each encoding, -R, errors in HDFS's words, and the
// attributes kept across a namenode restart.
func TestGetfattrSetfattr(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	must(t, e.sh.FS.Mkdir(ctx, "/x", 0o755, true))
	must(t, e.sh.Touchz(ctx, []string{"/x/f"}))
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "user.text", Value: `"hello world"`}))
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "user.hex", Value: "0x00ff"}))
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "user.b64", Value: "0saGk="}))
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "user.empty"}))
	must(t, e.sh.Setfattr(ctx, []string{"/x"}, fsshell.SetfattrOptions{Name: "user.dir", Value: "d"}))
	// Replace, then remove.
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "user.gone", Value: "1"}))
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "user.gone", Value: "2"}))
	must(t, e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Remove: "user.gone"}))

	get := func(args []string, o fsshell.GetfattrOptions) string {
		t.Helper()
		e.reset()
		must(t, e.sh.Getfattr(ctx, args, o))
		return e.out.String()
	}
	want := "# file: /x/f\nuser.b64=\"hi\"\nuser.empty\nuser.hex=\"\x00\xff\"\nuser.text=\"hello world\"\n"
	if got := get([]string{"/x/f"}, fsshell.GetfattrOptions{Dump: true}); got != want {
		t.Fatalf("getfattr -d:\n%q\nwant\n%q", got, want)
	}
	if got := get([]string{"/x/f"}, fsshell.GetfattrOptions{Name: "user.hex", Encoding: "hex"}); got != "# file: /x/f\nuser.hex=0x00ff\n" {
		t.Fatalf("getfattr -n -e hex: %q", got)
	}
	if got := get([]string{"/x/f"}, fsshell.GetfattrOptions{Name: "user.text", Encoding: "base64"}); got != "# file: /x/f\nuser.text=0saGVsbG8gd29ybGQ=\n" {
		t.Fatalf("getfattr -e base64: %q", got)
	}
	if got := get([]string{"/x"}, fsshell.GetfattrOptions{Dump: true, Recursive: true}); got != "# file: /x\nuser.dir=\"d\"\n"+want {
		t.Fatalf("getfattr -R: %q", got)
	}
	err := e.sh.Getfattr(ctx, []string{"/x/f"}, fsshell.GetfattrOptions{Name: "user.nope"})
	if err == nil || !strings.Contains(err.Error(), "At least one of the attributes provided was not found.") {
		t.Fatalf("getfattr of a missing attribute: %v", err)
	}
	err = e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Name: "nons", Value: "1"})
	if err == nil || !strings.Contains(err.Error(), "must be prefixed with user/trusted/security/system/raw") {
		t.Fatalf("setfattr without a namespace: %v", err)
	}
	err = e.sh.Setfattr(ctx, []string{"/x/f"}, fsshell.SetfattrOptions{Remove: "user.gone"})
	if err == nil || !strings.Contains(err.Error(), "No matching attributes found for remove operation") {
		t.Fatalf("setfattr -x of a missing attribute: %v", err)
	}

	e.c.RestartNameNode()
	if got := get([]string{"/x/f"}, fsshell.GetfattrOptions{Dump: true}); got != want {
		t.Fatalf("getfattr -d after a namenode restart:\n%q", got)
	}
}
