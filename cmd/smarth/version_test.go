package main

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersion: `smarth version` answers (it was an unknown command) with
// "smarth VERSION" first, as hadoop version's "Hadoop 3.4.1", and the Go
// toolchain; the revision line comes from the build's VCS stamp.
func TestVersion(t *testing.T) {
	rc, out, msg := runSmarth("version")
	lines := strings.Split(out, "\n")
	if rc != 0 || !strings.HasPrefix(lines[0], "smarth ") || !strings.Contains(out, "Compiled with "+runtime.Version()) {
		t.Fatalf("smarth version: rc %d, %q %q", rc, out, msg)
	}
	if rc, _, _ := runSmarth("version", "extra"); rc != 2 {
		t.Fatalf("smarth version extra: rc %d, want 2", rc)
	}
	var b bytes.Buffer
	writeVersion(&b, &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.time", Value: "2026-11-28T18:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}, "/usr/bin/smarth")
	want := "smarth v1.2.3\nSource code revision abc123 (modified) committed 2026-11-28T18:00:00Z\nCompiled with " +
		runtime.Version() + " for " + runtime.GOOS + "/" + runtime.GOARCH + "\nThis command was run using /usr/bin/smarth\n"
	if b.String() != want {
		t.Fatalf("writeVersion:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeVersion(&b, nil, "")
	if !strings.HasPrefix(b.String(), "smarth (devel)\nCompiled with ") {
		t.Fatalf("without build info: %q", b.String())
	}
}
