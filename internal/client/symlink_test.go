package client_test

import (
	"context"
	"errors"
	"testing"

	"smarth/internal/testcluster"
)

// TestCreateSymlinkNotSupported: symlinks get HDFS's clear refusal.
func TestCreateSymlinkNotSupported(t *testing.T) {
	c := testcluster.Start(t, testcluster.Options{DataNodes: 1})
	err := c.Client(t).CreateSymlink(context.Background(), "/target", "/link", false)
	if !errors.Is(err, errors.ErrUnsupported) || err.Error() != "createSymlink /link: Symlinks not supported" {
		t.Fatalf("createSymlink: %v", err)
	}
}
