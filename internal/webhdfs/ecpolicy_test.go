package webhdfs_test

import (
	"strings"
	"testing"

	"smarth/internal/testcluster"
)

// TestMissingFeatures: erasure coding and the storage policy satisfier
// answer as a Hadoop 3.4 namenode without them; SETQUOTABYSTORAGETYPE
// checks its parameters as HDFS.
func TestMissingFeatures(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	_ = c
	su := "user.name=" + osUser(t)
	if r := w.op("PUT", "/d", "MKDIRS", su); r.code != 200 {
		t.Fatalf("MKDIRS: %s", r.body)
	}
	if r := w.twoStep("PUT", "/d/f", "CREATE", []byte("abc"), su); r.code != 201 {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}

	// GETECPOLICY: null for a replicated path, 404 for a missing one.
	if r := w.op("GET", "/d", "GETECPOLICY", su); r.code != 200 || strings.TrimSpace(string(r.body)) != `{"ErasureCodingPolicy":null}` {
		t.Fatalf("GETECPOLICY: %d %s", r.code, r.body)
	}
	w.op("GET", "/nope", "GETECPOLICY", su).remote(t, 404, "FileNotFoundException")

	// GETECPOLICIES: the five system policies, all DISABLED.
	infos := w.op("GET", "/", "GETECPOLICIES", su).json(t)["ErasureCodingPolicies"].(map[string]any)["ErasureCodingPolicyInfo"].([]any)
	if len(infos) != 5 {
		t.Fatalf("GETECPOLICIES: %d policies", len(infos))
	}
	for _, i := range infos {
		m := i.(map[string]any)
		p := m["policy"].(map[string]any)
		if m["state"] != "DISABLED" || p["name"] == "" || p["cellSize"] != float64(1<<20) {
			t.Fatalf("GETECPOLICIES entry: %v", m)
		}
	}

	// Enabling is refused with the reason; unknown names are named.
	if msg := w.op("PUT", "/", "ENABLEECPOLICY", su, "ecpolicy=RS-6-3-1024k").remote(t, 400, "HadoopIllegalArgumentException"); !strings.Contains(msg, "replicated blocks only") {
		t.Fatalf("ENABLEECPOLICY: %s", msg)
	}
	if msg := w.op("PUT", "/", "ENABLEECPOLICY", su, "ecpolicy=RS-99").remote(t, 400, "HadoopIllegalArgumentException"); msg != "The policy name RS-99 does not exist" {
		t.Fatalf("ENABLEECPOLICY unknown: %s", msg)
	}
	if r := w.op("PUT", "/", "DISABLEECPOLICY", su, "ecpolicy=XOR-2-1-1024k"); r.code != 200 {
		t.Fatalf("DISABLEECPOLICY: %d %s", r.code, r.body)
	}
	w.op("PUT", "/", "DISABLEECPOLICY", su, "ecpolicy=RS-99").remote(t, 400, "HadoopIllegalArgumentException")

	// SETECPOLICY: "replication" is what /d already is; EC policies are
	// not enabled; files and missing paths are refused as in HDFS.
	if r := w.op("PUT", "/d", "SETECPOLICY", su, "ecpolicy=replication"); r.code != 200 {
		t.Fatalf("SETECPOLICY replication: %d %s", r.code, r.body)
	}
	if msg := w.op("PUT", "/d", "SETECPOLICY", su, "ecpolicy=RS-6-3-1024k").remote(t, 400, "HadoopIllegalArgumentException"); !strings.Contains(msg, "does not match any enabled erasure coding policies") {
		t.Fatalf("SETECPOLICY: %s", msg)
	}
	if msg := w.op("PUT", "/d/f", "SETECPOLICY", su, "ecpolicy=replication").remote(t, 403, "IOException"); !strings.Contains(msg, "/d/f") {
		t.Fatalf("SETECPOLICY file: %s", msg)
	}
	w.op("PUT", "/nope", "SETECPOLICY", su, "ecpolicy=replication").remote(t, 404, "FileNotFoundException")
	w.op("PUT", "/d", "SETECPOLICY", "user.name=mallory", "ecpolicy=replication").remote(t, 403, "AccessControlException")
	if r := w.op("POST", "/d", "UNSETECPOLICY", su); r.code != 200 {
		t.Fatalf("UNSETECPOLICY: %d %s", r.code, r.body)
	}
	w.op("POST", "/d/f", "UNSETECPOLICY", su).remote(t, 403, "IOException")

	// SATISFYSTORAGEPOLICY: the satisfier is off (mode none).
	if msg := w.op("PUT", "/d", "SATISFYSTORAGEPOLICY", su).remote(t, 403, "UnsupportedActionException"); !strings.Contains(msg, "storage policy satisfier feature has been disabled") {
		t.Fatalf("SATISFYSTORAGEPOLICY: %s", msg)
	}

	// SETQUOTABYSTORAGETYPE: parameters checked as HDFS does (the
	// operation itself: TestQuotaByStorageType).
	w.op("PUT", "/d", "SETQUOTABYSTORAGETYPE", su, "storagespacequota=10").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/d", "SETQUOTABYSTORAGETYPE", su, "storagetype=TAPE", "storagespacequota=10").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/d", "SETQUOTABYSTORAGETYPE", su, "storagetype=DISK").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/nope", "SETQUOTABYSTORAGETYPE", su, "storagetype=DISK", "storagespacequota=10").remote(t, 404, "FileNotFoundException")
	if msg := w.op("PUT", "/d", "SETQUOTABYSTORAGETYPE", su, "storagetype=RAM_DISK", "storagespacequota=10").remote(t, 403, "UnsupportedActionException"); !strings.Contains(msg, "not supported for RAM_DISK") {
		t.Fatalf("SETQUOTABYSTORAGETYPE RAM_DISK: %s", msg)
	}
}
