package demo_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"smarth/internal/cluster/demo"
	"smarth/internal/testcluster"
)

// The README's first command, end to end with the real binary: every step
// must pass and the cluster must be gone afterwards.
func TestDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end demo skipped in -short mode")
	}
	bin := testcluster.Binary(t)
	home := t.TempDir()
	var out strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	err := demo.Run(ctx, demo.Options{
		Home: home, Binary: bin, Size: 6<<20 + 1, DataNodes: 3, NodeManagers: true, Out: &out,
	})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"3 datanodes registered", "verified: the bytes read back are the bytes uploaded",
		"verified against a local count", "Every step passed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "killed") {
		t.Errorf("a daemon needed SIGKILL at the end:\n%s", out.String())
	}
}
