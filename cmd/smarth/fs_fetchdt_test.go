package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"smarth/internal/auth"
)

// TestFsFetchdtOffline: what fetchdt does without a namenode: one of
// --cancel/--renew/--print at a time (hdfs fetchdt's message, exit 2),
// --print of a token file as hdfs fetchdt prints it, and a file that is
// no token file named as such.
func TestFsFetchdtOffline(t *testing.T) {
	dir := t.TempDir()
	if _, code, msg := fsRun("fetchdt", "--cancel", "--print", filepath.Join(dir, "x")); code != 2 || msg != "ERROR: Only specify cancel, renew or print." {
		t.Fatalf("--cancel --print: exit %d, %q", code, msg)
	}
	id := auth.DelegationIdentifier{Owner: "alice", Renewer: "yarn", IssueDate: 1764072000000, MaxDate: 1764676800000, Seq: 7, MasterKeyID: 20417}
	tok := auth.HadoopToken{Identifier: id.Marshal(), Password: []byte("01234567890123456789"), Kind: auth.KindWebHDFS, Service: "127.0.0.1:9870"}
	file := filepath.Join(dir, "alice.dt")
	if err := auth.WriteTokenStorageFile(file, []auth.StoredToken{{Alias: tok.Service, Token: tok}}); err != nil {
		t.Fatal(err)
	}
	out, code, msg := fsRun("fetchdt", "--print", file)
	want := "Token (owner=alice, renewer=yarn, realUser=, issueDate=1764072000000, maxDate=1764676800000, sequenceNumber=7, masterKeyId=20417) for 127.0.0.1:9870\n"
	if code != 0 || out != want {
		t.Fatalf("--print: exit %d %q\n got %q\nwant %q", code, msg, out, want)
	}
	bad := filepath.Join(dir, "bad.dt")
	if err := os.WriteFile(bad, []byte("alice:0123"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code, msg := fsRun("fetchdt", "--print", bad); code != 1 || !strings.Contains(msg, bad) || !strings.Contains(msg, "Bad header found in token storage.") {
		t.Fatalf("--print of a credential file: exit %d, %q", code, msg)
	}
}
