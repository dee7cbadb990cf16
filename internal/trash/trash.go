// Package trash is the layout of a user's trash, shared by the client,
// which moves deletes into it (Hadoop's TrashPolicyDefault is a client
// policy), and the namenode, which empties it on a timer (HDFS's
// Trash.Emptier runs in the namenode). It decides names only: where the
// trash is, what a checkpoint is called and how old it is. Moving and
// deleting are the callers' namespace operations.
package trash

import (
	"path"
	"strconv"
	"time"
)

const (
	// Dir is the trash directory's name under a home directory.
	Dir = ".Trash"
	// Current is where deletes go until the next checkpoint.
	Current = "Current"
	// Permission of the trash directories: only their user may look in.
	Permission = 0o700
	// checkpointLayout is Java's yyMMddHHmmss, TrashPolicyDefault's
	// checkpoint name, in the local time zone as Java formats it.
	checkpointLayout = "060102150405"
	// MaxCheckpointTries bounds the "-N" suffixes tried for a free name.
	MaxCheckpointTries = 1000
)

// Root is user's trash directory, /user/<user>/.Trash.
func Root(user string) string { return path.Join("/user", user, Dir) }

// CheckpointName is the n-th candidate name (0: no suffix) of a checkpoint
// made at t.
func CheckpointName(t time.Time, n int) string {
	name := t.Format(checkpointLayout)
	if n > 0 {
		name += "-" + strconv.Itoa(n)
	}
	return name
}

// CheckpointTime reads the time of a checkpoint from its name; like
// Java's SimpleDateFormat.parse it ignores what follows the date (a "-N"
// suffix). ok is false for anything else (Current, a stray entry).
func CheckpointTime(name string) (t time.Time, ok bool) {
	if len(name) < len(checkpointLayout) {
		return time.Time{}, false
	}
	t, err := time.ParseInLocation(checkpointLayout, name[:len(checkpointLayout)], time.Local)
	return t, err == nil
}

// Expired says whether a checkpoint made at made is past interval at now.
func Expired(made, now time.Time, interval time.Duration) bool {
	return now.Add(-interval).After(made)
}
