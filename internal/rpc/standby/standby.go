// Package standby is how a namenode that is not the active one of its HA
// group refuses a call, and how a client reads that refusal: HDFS's
// StandbyException, which its ConfiguredFailoverProxyProvider answers by
// trying the next namenode. Both sides of the wire use this one package
// so that the wording and the hint cannot drift apart.
package standby

import (
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Operation categories, as HDFS's NameNode.OperationCategory.
const (
	Read  = "READ"
	Write = "WRITE"
)

// hdfsText is HDFS's StandbyException message for a category, which
// Hadoop's own tools and scripts match.
const (
	prefix   = "Operation category "
	middle   = " is not supported in state standby. Visit https://s.apache.org/sbnn-error"
	hintHead = "; the active namenode is "
)

// Error is the refusal of a call in category (Read or Write) by a
// standby. active is the active namenode's RPC address when the standby
// knows it ("" otherwise): a client goes there next instead of trying
// every namenode in turn. The code is Unavailable, so a client without
// failover retries as it would in safe mode.
func Error(category, active string) error {
	msg := prefix + category + middle
	if active != "" {
		msg += hintHead + active
	}
	return status.Error(codes.Unavailable, msg)
}

// Is says whether err is a standby's refusal, and gives the active
// namenode it named ("" when it named none).
func Is(err error) (active string, ok bool) {
	if err == nil {
		return "", false
	}
	msg := err.Error() // a wrapped refusal, as the client's errors wrap it
	if st, isStatus := status.FromError(err); isStatus {
		msg = st.Message()
	}
	i := strings.Index(msg, middle)
	if i < 0 || !strings.Contains(msg[:i], prefix) {
		return "", false
	}
	rest, found := strings.CutPrefix(msg[i+len(middle):], hintHead)
	if !found {
		return "", true
	}
	if j := strings.IndexAny(rest, " ;\n)"); j >= 0 {
		rest = rest[:j]
	}
	return rest, true
}

// ObserverReads are the ClientProtocol methods (full gRPC names) a
// standby may serve as an observer, to a client that sends its state id
// (ipc.StateKey): the namespace reads. The client sends these to a
// standby first when observer reads are on; the namenode admits only
// these.
var ObserverReads = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{"GetBlockLocations", "GetFileInfo", "GetListing", "GetXAttrs", "ListXAttrs",
		"GetContentSummary", "GetAclStatus", "GetSnapshottableDirListing", "GetSnapshotDiffReport",
		"GetStoragePolicy", "ListCachePools", "ListCacheDirectives"} {
		m["/smarth.dfs.ClientProtocol/"+n] = true
	}
	return m
}()
