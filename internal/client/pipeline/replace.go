package pipeline

import "fmt"

// ReplacePolicy says whether pipeline recovery asks the namenode for a
// replacement datanode (GetAdditionalDatanode) for the one that failed.
type ReplacePolicy string

const (
	// ReplaceDefault is HDFS's DEFAULT policy without its hflush/append
	// clause: with replication r >= 3, replace when the survivors are at
	// most r/2. Otherwise continue on the survivors; the namenode
	// re-replicates the block once it is complete.
	ReplaceDefault ReplacePolicy = "default"
	// ReplaceAlways replaces whenever survivors < replication.
	ReplaceAlways ReplacePolicy = "always"
	// ReplaceNever always continues on the survivors.
	ReplaceNever ReplacePolicy = "never"
)

// ParseReplacePolicy accepts "", "default", "always", "never".
func ParseReplacePolicy(s string) (ReplacePolicy, error) {
	switch ReplacePolicy(s) {
	case "", ReplaceDefault:
		return ReplaceDefault, nil
	case ReplaceAlways, ReplaceNever:
		return ReplacePolicy(s), nil
	}
	return "", fmt.Errorf("unknown datanode replacement policy %q (want default, always or never)", s)
}

// NeedReplacement decides whether to add a datanode to a pipeline left
// with survivors nodes for a file of the given replication.
func (p ReplacePolicy) NeedReplacement(replication, survivors int) bool {
	if survivors >= replication || survivors == 0 {
		return false
	}
	switch p {
	case ReplaceAlways:
		return true
	case ReplaceNever:
		return false
	}
	return replication >= 3 && survivors <= replication/2
}
