package webhdfs_test

import (
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"smarth/internal/testcluster"
	"smarth/internal/webhdfs"
)

// TestGetBlockLocations: GET_BLOCK_LOCATIONS is the namenode's
// LocatedBlocks in JsonUtil's shape, honouring offset and length.
func TestGetBlockLocations(t *testing.T) {
	_, w := startCluster(t, testcluster.Options{DataNodes: 2, BlockSize: 1 << 20, Simple: true})
	su := "user.name=" + osUser(t)
	if r := w.twoStep("PUT", "/f", "CREATE", randBytes(2_500_000), su, "replication=2"); r.code != 201 {
		t.Fatalf("CREATE: %d %s", r.code, r.body)
	}
	// The file is complete once one replica of its last block is reported
	// (as in HDFS); the second datanode's incremental report may come a
	// moment later, so wait for it before checking the locations.
	var lb map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		lb = w.op("GET", "/f", "GET_BLOCK_LOCATIONS", su).json(t)["LocatedBlocks"].(map[string]any)
		if allReplicated(lb, 2) || time.Now().After(deadline) {
			break
		}
	}
	if lb["fileLength"] != float64(2_500_000) || lb["isUnderConstruction"] != false || lb["isLastBlockComplete"] != true {
		t.Fatalf("LocatedBlocks: %v", lb)
	}
	blocks := lb["locatedBlocks"].([]any)
	if len(blocks) != 3 {
		t.Fatalf("%d located blocks, want 3", len(blocks))
	}
	for i, b := range blocks {
		m := b.(map[string]any)
		if m["startOffset"] != float64(i<<20) || m["isCorrupt"] != false {
			t.Fatalf("block %d: %v", i, m)
		}
		blk := m["block"].(map[string]any)
		if blk["blockId"] == nil || blk["generationStamp"] == nil || blk["blockPoolId"] == "" {
			t.Fatalf("block %d: %v", i, blk)
		}
		locs := m["locations"].([]any)
		if len(locs) != 2 || len(m["storageTypes"].([]any)) != 2 {
			t.Fatalf("block %d: %d locations", i, len(locs))
		}
		dn := locs[0].(map[string]any)
		for _, k := range []string{"ipAddr", "name", "hostName", "storageID", "xferPort", "infoPort", "ipcPort", "networkLocation", "adminState"} {
			if _, ok := dn[k]; !ok {
				t.Fatalf("datanode JSON lacks %s: %v", k, dn)
			}
		}
		if _, ok := m["blockToken"].(map[string]any)["urlString"].(string); !ok {
			t.Fatalf("block %d: blockToken %v", i, m["blockToken"])
		}
	}
	last := lb["lastLocatedBlock"].(map[string]any)
	if last["startOffset"] != float64(2<<20) {
		t.Fatalf("lastLocatedBlock: %v", last)
	}

	// offset/length select the blocks covering the range.
	part := w.op("GET", "/f", "GET_BLOCK_LOCATIONS", su, "offset=1100000", "length=10").json(t)["LocatedBlocks"].(map[string]any)
	if bs := part["locatedBlocks"].([]any); len(bs) != 1 || bs[0].(map[string]any)["startOffset"] != float64(1<<20) {
		t.Fatalf("offset=1100000: %v", bs)
	}
	if part["lastLocatedBlock"].(map[string]any)["startOffset"] != float64(2<<20) {
		t.Fatalf("offset=1100000: lastLocatedBlock %v", part["lastLocatedBlock"])
	}
	w.op("GET", "/f", "GET_BLOCK_LOCATIONS", su, "offset=-1").remote(t, 400, "IllegalArgumentException")
	w.op("GET", "/nope", "GET_BLOCK_LOCATIONS", su).remote(t, 404, "FileNotFoundException")
	w.op("GET", "/f", "GET_BLOCK_LOCATIONS", "user.name=mallory").json(t) // world-readable file: allowed
}

// TestSnapshotDiffListing pages GETSNAPSHOTDIFFLISTING two entries at a
// time and checks the union is the report GETSNAPSHOTDIFF gives, laid
// out as HDFS's listing (changed directory as a reference modify entry,
// its children under its id, a rename as a delete+create pair).
func TestSnapshotDiffListing(t *testing.T) {
	defer webhdfs.SetSnapshotDiffListingLimit(2)()
	_, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	su := "user.name=" + osUser(t)
	for _, d := range []string{"/s", "/s/a"} {
		if r := w.op("PUT", d, "MKDIRS", su); r.code != 200 {
			t.Fatalf("MKDIRS: %s", r.body)
		}
	}
	for _, f := range []string{"/s/a/old", "/s/a/gone"} {
		if r := w.twoStep("PUT", f, "CREATE", []byte("x"), su); r.code != 201 {
			t.Fatalf("CREATE %s: %d %s", f, r.code, r.body)
		}
	}
	if r := w.op("PUT", "/s", "ALLOWSNAPSHOT", su); r.code != 200 {
		t.Fatalf("ALLOWSNAPSHOT: %s", r.body)
	}
	w.op("PUT", "/s", "CREATESNAPSHOT", su, "snapshotname=s1")
	w.twoStep("PUT", "/s/a/new", "CREATE", []byte("y"), su)
	w.op("DELETE", "/s/a/gone", "DELETE", su)
	w.op("PUT", "/s/a/old", "RENAME", su, "destination=/s/a/renamed")
	w.op("PUT", "/s", "CREATESNAPSHOT", su, "snapshotname=s2")

	type entry struct{ kind, src, dst string }
	var got []entry
	var ids = map[string]float64{} // fileId by path
	var dirOf = map[string]float64{}
	start, index, pages := "", "-1", 0
	for {
		q := []string{su, "oldsnapshotname=s1", "snapshotname=s2", "snapshotdiffstartpath=" + start, "snapshotdiffindex=" + index}
		l := w.op("GET", "/s", "GETSNAPSHOTDIFFLISTING", q...).json(t)["SnapshotDiffReportListing"].(map[string]any)
		pages++
		n := 0
		for _, kind := range []string{"modifyList", "createList", "deleteList"} {
			for _, e := range l[kind].([]any) {
				m := e.(map[string]any)
				n++
				dst, _ := m["targetPath"].(string)
				got = append(got, entry{kind, m["sourcePath"].(string), dst})
				ids[kind+":"+m["sourcePath"].(string)] = m["fileId"].(float64)
				dirOf[kind+":"+m["sourcePath"].(string)] = m["dirId"].(float64)
				if _, ok := m["isReference"].(bool); !ok {
					t.Fatalf("entry without isReference: %v", m)
				}
			}
		}
		if n > 2 || l["isFromEarlier"] != true {
			t.Fatalf("page %d: %d entries, isFromEarlier %v", pages, n, l["isFromEarlier"])
		}
		if l["lastPath"] == "" && l["lastIndex"] == float64(-1) {
			break
		}
		start, index = l["lastPath"].(string), formatIndex(l["lastIndex"].(float64))
		if pages > 20 {
			t.Fatal("listing does not end")
		}
	}
	sort.Slice(got, func(i, j int) bool { return got[i].kind+got[i].src < got[j].kind+got[j].src })
	want := []entry{
		{"createList", "a/new", ""}, {"createList", "a/renamed", ""},
		{"deleteList", "a/gone", ""}, {"deleteList", "a/old", "a/renamed"},
		{"modifyList", "a", ""},
	}
	if len(got) != len(want) {
		t.Fatalf("listing %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("listing %v, want %v", got, want)
		}
	}
	if pages < 3 {
		t.Fatalf("%d pages for 5 entries of 2", pages)
	}
	// Children sit under their directory's id; a rename's two halves
	// share a fileId.
	if dirOf["createList:a/new"] != ids["modifyList:a"] || dirOf["deleteList:a/gone"] != ids["modifyList:a"] {
		t.Fatalf("children not under a's id: %v %v", dirOf, ids)
	}
	if ids["deleteList:a/old"] != ids["createList:a/renamed"] {
		t.Fatalf("rename halves have ids %v and %v", ids["deleteList:a/old"], ids["createList:a/renamed"])
	}

	// A cursor that does not continue this diff is refused.
	w.op("GET", "/s", "GETSNAPSHOTDIFFLISTING", su, "oldsnapshotname=s1", "snapshotname=s2",
		"snapshotdiffstartpath=zzz", "snapshotdiffindex=1").remote(t, 403, "SnapshotException")
	// A missing snapshot: the namenode's diff RPC answers NotFound, so
	// FileNotFoundException (HDFS raises SnapshotException, 403), naming it.
	if msg := w.op("GET", "/s", "GETSNAPSHOTDIFFLISTING", su, "oldsnapshotname=s1", "snapshotname=nope").remote(t, 404, "FileNotFoundException"); !strings.Contains(msg, "nope") {
		t.Fatalf("missing snapshot: %s", msg)
	}
}

func formatIndex(f float64) string { return strconvItoa(int(f)) }

var strconvItoa = strconv.Itoa

// allReplicated reports whether every located block of lb lists want
// locations.
func allReplicated(lb map[string]any, want int) bool {
	blocks, _ := lb["locatedBlocks"].([]any)
	for _, b := range blocks {
		if locs, _ := b.(map[string]any)["locations"].([]any); len(locs) != want {
			return false
		}
	}
	return len(blocks) > 0
}
