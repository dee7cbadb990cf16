package namespace

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
)

// Owner and group names are kept once, in a process-wide table, and inodes
// hold their serial numbers (HDFS's SerialNumberManager): a namespace has a
// handful of names and millions of inodes. Serials live in memory only;
// images and edits keep the names, so any load order gives equal names.
// The table is process-wide, as in HDFS, so that an inode's accessors need
// no tree, and it only grows (a name no inode holds any more keeps its
// serial, which a later chown to it reuses).

// maxNames bounds the table: serials are 24 bits in an inode's status
// word (serial 0 is the empty name).
const maxNames = 1 << 24

// nameLimit is maxNames but for tests of a full table (guarded by
// names.mu).
var nameLimit = maxNames

var names struct {
	mu     sync.Mutex
	serial map[string]uint32 // guarded by mu
	// list is read without the lock: appends write past the length any
	// reader loaded, and a new header is published only after its
	// element is written.
	list atomic.Pointer[[]string]
}

func init() {
	l := []string{""}
	names.list.Store(&l)
	names.serial = map[string]uint32{"": 0}
}

// nameSerial returns s's serial, adding s to the table if new.
func nameSerial(s string) (uint32, error) {
	names.mu.Lock()
	defer names.mu.Unlock()
	if v, ok := names.serial[s]; ok {
		return v, nil
	}
	l := *names.list.Load()
	if len(l) >= nameLimit {
		return 0, fmt.Errorf("too many distinct user and group names (%d): cannot add %q", len(l), s)
	}
	s = strings.Clone(s) // not a slice of a bigger buffer (an image record)
	v := uint32(len(l))
	l = append(l, s)
	names.list.Store(&l)
	names.serial[s] = v
	return v, nil
}

// nameOf returns the name with serial v.
func nameOf(v uint32) string { return (*names.list.Load())[v] }

// NumNames is the number of distinct owner and group names the process
// has seen (with the empty name).
func NumNames() int { return len(*names.list.Load()) }

// The status word packs what every inode has and HDFS packs the same way
// (PermissionStatusFormat): owner serial, group serial, the directory flag
// and the permission bits.
const (
	permMask   = 0o7777 // rwx for owner, group, other; sticky, setgid, setuid
	dirBit     = 1 << 15
	groupShift = 16
	userShift  = 40
	serialMask = maxNames - 1
)

func packStatus(dir bool, perm uint16, user, group uint32) uint64 {
	s := uint64(perm&permMask) | uint64(group)<<groupShift | uint64(user)<<userShift
	if dir {
		s |= dirBit
	}
	return s
}

// The header word packs a file's replication factor and preferred block
// size (HDFS's INodeFile.HeaderFormat).
const (
	blockSizeBits = 48
	// MaxBlockSize is the largest preferred block size a file can have.
	MaxBlockSize = 1<<blockSizeBits - 1
	// MaxReplication is the largest replication factor a file can have.
	MaxReplication = 1<<(64-blockSizeBits) - 1
)
