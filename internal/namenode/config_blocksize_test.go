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
	cfg.MaxBlockSize = cfg.BlockSize
	if err := cfg.Validate(); err != nil {
		t.Fatalf("block_size 2^48-512: %v", err)
	}
}

// TestConfigMaxBlockSize: max_block_size defaults to HDFS's 32 GiB; one
// below block_size (every default create would fail) or above 48 bits is
// refused at start, naming the key.
func TestConfigMaxBlockSize(t *testing.T) {
	if got := DefaultConfig().MaxBlockSize; got != 32<<30 {
		t.Errorf("default max_block_size %d, want 32 GiB (HDFS's dfs.namenode.fs-limits.max-block-size)", got)
	}
	for _, c := range []struct{ bs, max int64 }{{64 << 20, 32 << 20}, {64 << 20, namespace.MaxBlockSize + 1}} {
		cfg := DefaultConfig()
		cfg.BlockSize, cfg.MaxBlockSize = c.bs, c.max
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "max_block_size") {
			t.Errorf("block_size %d, max_block_size %d: Validate = %v, want an error naming max_block_size", c.bs, c.max, err)
		}
	}
}
