package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/namenode/speeds"
	"smarth/internal/rpc/dfspb"
)

var now = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fakeNN is a namenode of fixed figures: two racks, a dead datanode, speed
// records, a running job in the cache statistics, and a namespace of /d
// (a directory holding the file f) and /private (the web user may not
// look inside).
type fakeNN struct {
	health error
	nonDFS int64 // taken from each datanode's remaining by files other than replicas
}

func (f fakeNN) Overview() Overview {
	node := func(id, rack string, capacity, used int64) *dfspb.DatanodeInfo {
		return &dfspb.DatanodeInfo{Id: id, Hostname: "host-" + id, IpAddr: "10.0.0.1", DataPort: 50010, Rack: rack,
			Capacity: capacity, DfsUsed: used, Remaining: max(0, capacity-used-f.nonDFS)}
	}
	leaving := node("dn2", "/rack-b", 4<<30, 1<<30)
	leaving.AdminState = dfspb.AdminState_DECOMMISSION_IN_PROGRESS
	return Overview{
		Addr: "nn:8020", Placement: "speedaware", Started: now.Add(-time.Hour), LastTxID: 42, Files: 3, Dirs: 2, Blocks: 5,
		Datanodes: []Datanode{
			{Info: leaving, Live: true, LastSeen: now.Add(-2 * time.Second), Blocks: 5},
			{Info: node("dn1", "/rack-a", 4<<30, 1<<30), Live: true, LastSeen: now, Blocks: 4},
			{Info: node("dn3", "/rack-a", 8<<30, 8<<30), Live: false, LastSeen: now.Add(-time.Minute)},
		},
		Health: f.health,
		Cache: &dfspb.GetCacheStatsResponse{Policy: "bg", Hits: 7,
			Jobs: []*dfspb.JobCacheStatusResponse_Job{{JobId: "job_secret_1", CachedFraction: 0.5}}},
		Speeds: []speeds.Record{
			{Host: "c1", Datanode: "dn1", Recent: 10e6}, {Host: "c2", Datanode: "dn1", Recent: 30e6}, {Host: "c3", Datanode: "dn1", Recent: 20e6},
		},
	}
}

func (fakeNN) Journal() Journal {
	return Journal{Dir: "/meta", LastTxID: 120, CkptTxID: 100, CkptAt: now.Add(-time.Minute), EveryTxns: 1000, Every: time.Hour}
}

func (f fakeNN) Health() error                  { return f.health }
func (fakeNN) Conf() any                        { return struct{ A int }{1} }
func (fakeNN) DatanodeHosts() map[string]string { return map[string]string{"dn1": "host-dn1"} }
func (fakeNN) BlockLocations(ctx context.Context, req *dfspb.GetBlockLocationsRequest) (*dfspb.LocatedBlocks, error) {
	return &dfspb.LocatedBlocks{Blocks: []*dfspb.LocatedBlock{{Block: &dfspb.ExtendedBlock{BlockId: 1 << 30, NumBytes: 2048},
		Locations: []*dfspb.DatanodeInfo{{Hostname: "host-dn1", Rack: "/rack-a"}}, CachedOn: []string{"dn1"}}}}, nil
}

func (fakeNN) FileInfo(ctx context.Context, path string) (*dfspb.FileStatus, error) {
	switch path {
	case "/d", "/private":
		return &dfspb.FileStatus{Path: path, Type: dfspb.FileType_DIRECTORY, Permission: 0o755}, nil
	case "/d/f":
		return &dfspb.FileStatus{Path: path, Type: dfspb.FileType_FILE, Permission: 0o644, Length: 2048}, nil
	}
	return nil, status.Errorf(codes.NotFound, "getFileInfo %s: no such file or directory", path)
}

func (fakeNN) Listing(ctx context.Context, req *dfspb.GetListingRequest) (*dfspb.GetListingResponse, error) {
	if req.GetPath() == "/private" {
		return nil, status.Errorf(codes.PermissionDenied, "getListing /private: Permission denied: user=%s", WebUser)
	}
	return &dfspb.GetListingResponse{Entries: []*dfspb.FileStatus{{Path: "/d/f", Type: dfspb.FileType_FILE, Permission: 0o644},
		{Path: "/d/mine", Type: dfspb.FileType_DIRECTORY, Permission: 0o700, Owner: "alice"}}}, nil
}

func serve(t *testing.T, nn Namenode) func(path string) (int, string) {
	t.Helper()
	mux := http.NewServeMux()
	Register(mux, Config{ResourceManagerWeb: "rm:8088", Clock: func() time.Time { return now }}, nn)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(path string) (int, string) {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
}

// The overview formats the namenode's figures: live and dead datanodes by
// rack, capacity of the live ones only, the median client speed per
// datanode, the health; it is public, so no job id appears on it.
func TestOverviewPage(t *testing.T) {
	get := serve(t, fakeNN{})
	code, page := get("/")
	if code != 200 {
		t.Fatalf("GET /: %d\n%s", code, page)
	}
	for _, want := range []string{
		"Datanodes (2 live, 1 dead)",
		"8.0 GiB", "2.0 GiB", "25.0%", // live capacity, used, used %: dn3 is dead
		"20.0 MB/s (n=3)", // dn1's median
		"healthy", "policy bg", "hits 7", "up since 2026-01-02T02:04:05Z", "2s ago",
		"decommission in progress", // dn2's admin state
	} {
		if !strings.Contains(page, want) {
			t.Errorf("overview lacks %q:\n%s", want, page)
		}
	}
	if a, b := strings.Index(page, "/rack-a"), strings.Index(page, "/rack-b"); a < 0 || b < a {
		t.Errorf("racks not in order (rack-a at %d, rack-b at %d)", a, b)
	}
	if strings.Contains(page, "job_secret_1") {
		t.Errorf("the public overview names a job:\n%s", page)
	}
	_, page = serve(t, fakeNN{health: errors.New("edit log failed: disk")})("/")
	if !strings.Contains(page, "edit log failed: disk") {
		t.Errorf("overview of an unhealthy namenode does not say why:\n%s", page)
	}
}

// The browser: listings link into directories and files, a file path on
// /explorer redirects to /file, a refusal is 403 with the namenode's
// message, a missing path 404; the journal counts edits since the
// checkpoint.
func TestBrowseAndJournalPages(t *testing.T) {
	get := serve(t, fakeNN{})
	for _, tc := range []struct {
		path string
		code int
		want []string
	}{
		{"/explorer?path=/d", 200, []string{`href="/file?path=%2Fd%2Ff"`, "-rw-r--r--", "Browsing as <b>dr.who</b>",
			`<span title="not readable as dr.who">mine/</span>`}}, // alice's 0700: named, no dead link
		{"/explorer?path=/d/f", 302, nil},
		{"/explorer?path=/private", 403, []string{"Permission denied: user=dr.who"}},
		{"/file?path=/d/f", 200, []string{"blk_1073741824", "host-dn1 (/rack-a)", "<td>host-dn1 </td>", "2.0 KiB (2048 bytes)"}},
		{"/file?path=/nope", 404, []string{"no such file or directory"}},
		{"/journal", 200, []string{"/meta", "txid 100", "<td>20</td>", "after 1000 edits or 1h0m0s"}},
		{"/files?path=/d", 200, []string{`<script src="/static/files.js">`, `id=user`}},
		{"/static/files.js", 200, []string{"sessionStorage"}},
		{"/healthz", 200, []string{"ok"}},
	} {
		t.Run(strings.ReplaceAll(tc.path, "/", "_"), func(t *testing.T) {
			code, page := get(tc.path)
			if code != tc.code {
				t.Fatalf("GET %s: %d, want %d\n%s", tc.path, code, tc.code, page)
			}
			var lacks []string
			for _, w := range tc.want {
				if !strings.Contains(page, w) {
					lacks = append(lacks, w)
				}
			}
			if len(lacks) > 0 {
				t.Errorf("GET %s lacks %q:\n%s", tc.path, lacks, page)
			}
		})
	}
}

// The overview shows HDFS's "Non DFS Used" (capacity less DFS used less
// remaining), in total over the live datanodes and per datanode, so space
// taken by other files on the disks is accounted for.
func TestOverviewShowsNonDFSUsed(t *testing.T) {
	get := serve(t, fakeNN{nonDFS: 768 << 20})
	_, page := get("/")
	for _, want := range []string{
		"<th>configured capacity</th><th>DFS used</th><th>non DFS used</th><th>remaining</th>",
		// live total: 8 GiB, 2 GiB used, 2 x 768 MiB non DFS, the rest remaining
		`<td class="n">8.0 GiB</td><td class="n">2.0 GiB</td><td class="n">1.5 GiB</td><td class="n">4.5 GiB</td>`,
		// dn1: 4 GiB, 1 GiB used, 768 MiB non DFS, 2.25 GiB remaining
		`<td class="n">4.0 GiB</td><td class="n">1.0 GiB</td><td class="n">768.0 MiB</td><td class="n">2.2 GiB</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("overview lacks %q:\n%s", want, page)
		}
	}
}
