package namenode

import (
	"strings"
	"testing"

	"smarth/internal/namenode/namespace"
)

// TestConfigBlockSizeBound: a default block_size an inode cannot hold (48
// bits) is refused at start, naming the key, instead of failing every
// create that takes the default; the largest one it holds is accepted.
func TestConfigBlockSizeBound(t *testing.T) {
	cfg := DefaultConfig()
	cfg.BlockSize = namespace.MaxBlockSize + 1 // a multiple of 512
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "block_size") {
		t.Fatalf("block_size 2^48: Validate = %v, want an error naming block_size", err)
	}
	cfg.BlockSize = namespace.MaxBlockSize + 1 - 512
	if err := cfg.Validate(); err != nil {
		t.Fatalf("block_size 2^48-512: %v", err)
	}
}
