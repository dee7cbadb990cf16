package webhdfs_test

import (
	"strings"
	"testing"

	"smarth/internal/testcluster"
)

// TestQuotaByStorageType: SETQUOTABYSTORAGETYPE sets a DISK quota that a
// write past it hits with QuotaByStorageTypeExceededException naming the
// directory; GETQUOTAUSAGE and GETCONTENTSUMMARY show typeQuota as
// Hadoop's JsonUtil (only the types set, consumed and quota); -1 clears;
// only a superuser may set one.
func TestQuotaByStorageType(t *testing.T) {
	_, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true, BlockSize: 1 << 20})
	su := "user.name=" + osUser(t)
	if r := w.op("PUT", "/q", "MKDIRS", su, "permission=777"); r.code != 200 {
		t.Fatalf("MKDIRS: %s", r.body)
	}
	for _, kv := range [][]string{{"storagetype=DISK", "storagespacequota=1048576"}, {"storagetype=ssd", "storagespacequota=10"}} {
		if r := w.op("PUT", "/q", "SETQUOTABYSTORAGETYPE", append([]string{su}, kv...)...); r.code != 200 {
			t.Fatalf("SETQUOTABYSTORAGETYPE %v: %d %s", kv, r.code, r.body)
		}
	}
	w.op("PUT", "/q", "SETQUOTABYSTORAGETYPE", "user.name=mallory", "storagetype=DISK", "storagespacequota=5").remote(t, 403, "AccessControlException")
	if r := w.twoStep("PUT", "/q/small", "CREATE", []byte("abc"), su, "replication=1"); r.code != 201 {
		t.Fatalf("CREATE within the quota: %d %s", r.code, r.body)
	}

	typeQuota := func(op, key string) map[string]any {
		t.Helper()
		return w.op("GET", "/q", op, su).json(t)[key].(map[string]any)["typeQuota"].(map[string]any)
	}
	for op, key := range map[string]string{"GETQUOTAUSAGE": "QuotaUsage", "GETCONTENTSUMMARY": "ContentSummary"} {
		tq := typeQuota(op, key)
		disk, _ := tq["DISK"].(map[string]any)
		ssd, _ := tq["SSD"].(map[string]any)
		if len(tq) != 2 || disk["quota"] != float64(1<<20) || disk["consumed"] != float64(3) || ssd["quota"] != float64(10) || ssd["consumed"] != float64(0) {
			t.Fatalf("%s typeQuota: %v", op, tq)
		}
	}

	// 1.5 MiB needs a second 1 MiB block: past 1 MiB on DISK.
	big := make([]byte, 1536<<10)
	r := w.twoStep("PUT", "/q/big", "CREATE", big, su, "replication=1")
	if r.code < 400 || !strings.Contains(string(r.body), "QuotaByStorageTypeExceededException") ||
		!strings.Contains(string(r.body), "Quota by storage type : DISK on path : /q is exceeded. quota = 1 MB but space consumed = ") {
		t.Fatalf("CREATE past the DISK quota: %d %s", r.code, r.body)
	}

	if r := w.op("PUT", "/q", "SETQUOTABYSTORAGETYPE", su, "storagetype=DISK", "storagespacequota=-1"); r.code != 200 {
		t.Fatalf("clearing the DISK quota: %d %s", r.code, r.body)
	}
	if tq := typeQuota("GETQUOTAUSAGE", "QuotaUsage"); len(tq) != 1 || tq["SSD"] == nil {
		t.Fatalf("typeQuota after clearing DISK: %v", tq)
	}
	if r := w.twoStep("PUT", "/q/big2", "CREATE", big, su, "replication=1"); r.code != 201 {
		t.Fatalf("CREATE after clearing the DISK quota: %d %s", r.code, r.body)
	}
}
