package webhdfs_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"smarth/internal/testcluster"
)

// TestFeatures: append, truncate, concat, ACLs, snapshots and storage
// policies over WebHDFS, checked against the native client's view.
func TestFeatures(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Simple: true})
	ctx := context.Background()
	admin := c.Client(t)
	su := "user.name=" + osUser(t)
	if r := w.op("PUT", "/data", "MKDIRS", su); r.code != 200 {
		t.Fatalf("MKDIRS: %s", r.body)
	}

	// APPEND through the redirect, twice, across a block boundary.
	a, b, d := randBytes(700_000), randBytes(600_000), randBytes(1000)
	if r := w.twoStep("PUT", "/data/f", "CREATE", a, su); r.code != http.StatusCreated {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	for _, part := range [][]byte{b, d} {
		if r := w.twoStep("POST", "/data/f", "APPEND", part, su); r.code != 200 || len(r.body) != 0 {
			t.Fatalf("APPEND: %d %s", r.code, r.body)
		}
	}
	want := append(append(append([]byte{}, a...), b...), d...)
	if r := w.twoStep("GET", "/data/f", "OPEN", nil, su); !bytes.Equal(r.body, want) {
		t.Fatalf("after APPEND: %d bytes, want %d", len(r.body), len(want))
	}
	w.twoStep("POST", "/data", "APPEND", []byte("x"), su).remote(t, 404, "FileNotFoundException")

	// TRUNCATE on a block boundary is immediate; CONCAT joins files.
	if r := w.op("POST", "/data/f", "TRUNCATE", su, "newlength=1048576"); r.json(t)["boolean"] != true {
		t.Fatalf("TRUNCATE: %s", r.body)
	}
	if st, _ := admin.Stat(ctx, "/data/f"); st.Size != 1<<20 {
		t.Fatalf("after TRUNCATE: size %d", st.Size)
	}
	w.op("POST", "/data/f", "TRUNCATE", su, "newlength=99999999").remote(t, 400, "IllegalArgumentException")
	if r := w.twoStep("PUT", "/data/g", "CREATE", d, su); r.code != 201 {
		t.Fatalf("CREATE g: %s", r.body)
	}
	if r := w.op("POST", "/data/f", "CONCAT", su, "sources=/data/g"); r.code != 200 {
		t.Fatalf("CONCAT: %d %s", r.code, r.body)
	}
	if r := w.twoStep("GET", "/data/f", "OPEN", nil, su); !bytes.Equal(r.body, append(append([]byte{}, want[:1<<20]...), d...)) {
		t.Fatalf("after CONCAT: %d bytes", len(r.body))
	}
	w.op("GET", "/data/g", "GETFILESTATUS", su).remote(t, 404, "FileNotFoundException")

	// ACLs: bob gets read through a named entry; aclBit shows it.
	if r := w.op("PUT", "/data/f", "SETACL", su, "aclspec=user::rw-,user:bob:r--,group::---,other::---"); r.code != 200 {
		t.Fatalf("SETACL: %d %s", r.code, r.body)
	}
	as := w.op("GET", "/data/f", "GETACLSTATUS", su).json(t)["AclStatus"].(map[string]any)
	if es := as["entries"].([]any); len(es) != 2 || es[0] != "user:bob:r--" || es[1] != "group::---" || as["permission"] != "640" {
		t.Fatalf("GETACLSTATUS %v", as)
	}
	if fs := w.op("GET", "/data/f", "GETFILESTATUS", su).json(t)["FileStatus"].(map[string]any); fs["aclBit"] != true {
		t.Fatalf("aclBit missing: %v", fs)
	}
	if r := w.twoStep("GET", "/data/f", "OPEN", nil, "user.name=bob", "length=10"); r.code != 200 {
		t.Fatalf("bob reads through the ACL: %d %s", r.code, r.body)
	}
	w.twoStep("GET", "/data/f", "OPEN", nil, "user.name=carol").remote(t, 403, "AccessControlException")
	w.op("PUT", "/data/f", "MODIFYACLENTRIES", su, "aclspec=user:carol:r--")
	w.op("PUT", "/data/f", "REMOVEACLENTRIES", su, "aclspec=user:bob")
	as = w.op("GET", "/data/f", "GETACLSTATUS", su).json(t)["AclStatus"].(map[string]any)
	if es := as["entries"].([]any); len(es) != 2 || es[0] != "user:carol:r--" {
		t.Fatalf("after MODIFY/REMOVEACLENTRIES: %v", as)
	}
	w.op("PUT", "/data", "MODIFYACLENTRIES", su, "aclspec=default:user:bob:r-x")
	if es := w.op("GET", "/data", "GETACLSTATUS", su).json(t)["AclStatus"].(map[string]any)["entries"].([]any); len(es) == 0 {
		t.Fatal("default ACL not shown")
	}
	w.op("PUT", "/data", "REMOVEDEFAULTACL", su)
	w.op("PUT", "/data/f", "REMOVEACL", su)
	for _, p := range []string{"/data", "/data/f"} {
		if es := w.op("GET", p, "GETACLSTATUS", su).json(t)["AclStatus"].(map[string]any)["entries"].([]any); len(es) != 0 {
			t.Fatalf("%s: entries left after REMOVEACL/REMOVEDEFAULTACL: %v", p, es)
		}
	}
	w.op("PUT", "/data/f", "SETACL", "user.name=bob", "aclspec=user::rwx,group::---,other::---").remote(t, 403, "AccessControlException")

	// Snapshots.
	w.op("PUT", "/data", "CREATESNAPSHOT", su, "snapshotname=s1").remote(t, 403, "SnapshotException")
	if r := w.op("PUT", "/data", "ALLOWSNAPSHOT", su); r.code != 200 {
		t.Fatalf("ALLOWSNAPSHOT: %d %s", r.code, r.body)
	}
	if p := w.op("PUT", "/data", "CREATESNAPSHOT", su, "snapshotname=s1").json(t)["Path"]; p != "/data/.snapshot/s1" {
		t.Fatalf("CREATESNAPSHOT: %v", p)
	}
	if r := w.twoStep("GET", "/data/.snapshot/s1/f", "OPEN", nil, su, "length=5"); r.code != 200 || !bytes.Equal(r.body, want[:5]) {
		t.Fatalf("OPEN in a snapshot: %d %s", r.code, r.body)
	}
	w.twoStep("PUT", "/data/.snapshot/s1/new", "CREATE", []byte("x"), su).remote(t, 403, "SnapshotAccessControlException")
	w.twoStep("PUT", "/data/h", "CREATE", []byte("h"), su)
	w.op("DELETE", "/data/f", "DELETE", su)
	diff := w.op("GET", "/data", "GETSNAPSHOTDIFF", su, "oldsnapshotname=s1", "snapshotname=").json(t)["SnapshotDiffReport"].(map[string]any)
	types := map[string]string{}
	for _, e := range diff["diffList"].([]any) {
		m := e.(map[string]any)
		types[m["sourcePath"].(string)] = m["type"].(string)
	}
	if types["h"] != "CREATE" || types["f"] != "DELETE" || types[""] != "MODIFY" || diff["snapshotRoot"] != "/data" {
		t.Fatalf("GETSNAPSHOTDIFF %v", diff)
	}
	w.op("PUT", "/data", "RENAMESNAPSHOT", su, "oldsnapshotname=s1", "snapshotname=s2")
	sl := w.op("GET", "/data", "GETSNAPSHOTLIST", su).json(t)["SnapshotList"].([]any)
	if len(sl) != 1 || sl[0].(map[string]any)["fullPath"] != "/data/.snapshot/s2" {
		t.Fatalf("GETSNAPSHOTLIST %v", sl)
	}
	dl := w.op("GET", "/", "GETSNAPSHOTTABLEDIRECTORYLIST", su).json(t)["SnapshottableDirectoryList"].([]any)
	if len(dl) != 1 || dl[0].(map[string]any)["snapshotNumber"] != 1.0 || dl[0].(map[string]any)["parentFullPath"] != "/" {
		t.Fatalf("GETSNAPSHOTTABLEDIRECTORYLIST %v", dl)
	}
	if fs := w.op("GET", "/data", "GETFILESTATUS", su).json(t)["FileStatus"].(map[string]any); fs["snapshotEnabled"] != true {
		t.Fatalf("snapshotEnabled missing: %v", fs)
	}
	if r := w.op("DELETE", "/data", "DELETESNAPSHOT", su, "snapshotname=s2"); r.code != 200 {
		t.Fatalf("DELETESNAPSHOT: %d %s", r.code, r.body)
	}
	if r := w.op("PUT", "/data", "DISALLOWSNAPSHOT", su); r.code != 200 {
		t.Fatalf("DISALLOWSNAPSHOT: %d %s", r.code, r.body)
	}

	// Storage policies: stored attributes.
	all := w.op("GET", "/", "GETALLSTORAGEPOLICY", su).json(t)["BlockStoragePolicies"].(map[string]any)["BlockStoragePolicy"].([]any)
	if len(all) < 3 {
		t.Fatalf("GETALLSTORAGEPOLICY %v", all)
	}
	if p := w.op("GET", "/data/h", "GETSTORAGEPOLICY", su).json(t)["BlockStoragePolicy"].(map[string]any); p["name"] != "HOT" {
		t.Fatalf("default policy %v", p)
	}
	w.op("PUT", "/data", "SETSTORAGEPOLICY", su, "storagepolicy=COLD")
	if p := w.op("GET", "/data/h", "GETSTORAGEPOLICY", su).json(t)["BlockStoragePolicy"].(map[string]any); p["name"] != "COLD" || p["storageTypes"].([]any)[0] != "ARCHIVE" {
		t.Fatalf("inherited policy %v", p)
	}
	w.op("PUT", "/data", "SETSTORAGEPOLICY", su, "storagepolicy=LUKEWARM").remote(t, 400, "IllegalArgumentException")
	w.op("POST", "/data", "UNSETSTORAGEPOLICY", su)
	if p := w.op("GET", "/data/h", "GETSTORAGEPOLICY", su).json(t)["BlockStoragePolicy"].(map[string]any); p["name"] != "HOT" {
		t.Fatalf("after UNSETSTORAGEPOLICY %v", p)
	}
}
