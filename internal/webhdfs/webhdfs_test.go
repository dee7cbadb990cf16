package webhdfs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/user"
	"strings"
	"testing"
	"time"

	"smarth/internal/testcluster"
)

// web is a WebHDFS test client that never follows redirects by itself,
// so each step can be checked.
type web struct {
	t    *testing.T
	base string // http://namenode/webhdfs/v1
	hc   *http.Client
	auth string // Authorization header, if any
}

func newWeb(t *testing.T, c *testcluster.Cluster) *web {
	return &web{t: t, base: "http://" + c.NameNodeHTTPAddr() + "/webhdfs/v1",
		hc: &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type resp struct {
	code int
	hdr  http.Header
	body []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body is not JSON (%d): %q", r.code, r.body)
	}
	return m
}

// remote checks an error answer: HTTP code, exception and Java class.
func (r resp) remote(t *testing.T, code int, exception string) string {
	t.Helper()
	if r.code != code {
		t.Fatalf("status %d, want %d; body %s", r.code, code, r.body)
	}
	re, ok := r.json(t)["RemoteException"].(map[string]any)
	if !ok {
		t.Fatalf("no RemoteException in %s", r.body)
	}
	if re["exception"] != exception {
		t.Fatalf("exception %v, want %s (message %v)", re["exception"], exception, re["message"])
	}
	if cls, _ := re["javaClassName"].(string); !strings.HasSuffix(cls, "."+exception) && !strings.HasSuffix(cls, "$"+exception) {
		t.Fatalf("javaClassName %q does not name %s", cls, exception)
	}
	msg, _ := re["message"].(string)
	if msg == "" {
		t.Fatalf("empty message in %s", r.body)
	}
	return msg
}

func (w *web) do(method, rawURL string, body []byte) resp {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	if w.auth != "" {
		req.Header.Set("Authorization", w.auth)
	}
	res, err := w.hc.Do(req)
	if err != nil {
		w.t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		w.t.Fatalf("%s %s: reading body: %v", method, rawURL, err)
	}
	return resp{res.StatusCode, res.Header, b}
}

// op calls the namenode: method, path, op and "k=v" parameters.
func (w *web) op(method, path, op string, kv ...string) resp {
	w.t.Helper()
	q := url.Values{"op": {op}}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		q.Add(k, v)
	}
	return w.do(method, w.base+path+"?"+q.Encode(), nil)
}

// twoStep runs CREATE/OPEN/GETFILECHECKSUM through the redirect and checks
// the redirect carries a token and never a user name.
func (w *web) twoStep(method, path, op string, body []byte, kv ...string) resp {
	w.t.Helper()
	r := w.op(method, path, op, kv...)
	if r.code != http.StatusTemporaryRedirect {
		return r
	}
	loc := r.hdr.Get("Location")
	u, err := url.Parse(loc)
	if err != nil {
		w.t.Fatalf("Location %q: %v", loc, err)
	}
	if u.Query().Get("delegation") == "" || u.Query().Has("user.name") || u.Query().Has("doas") {
		w.t.Fatalf("redirect %s: want a delegation token and no user.name/doas", loc)
	}
	if u.Host == strings.TrimPrefix(strings.TrimSuffix(w.base, "/webhdfs/v1"), "http://") {
		w.t.Fatalf("redirect %s points back at the namenode", loc)
	}
	return w.do(method, loc, body)
}

func osUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

func randBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func startCluster(t *testing.T, opts testcluster.Options) (*testcluster.Cluster, *web) {
	c := testcluster.Start(t, opts)
	return c, newWeb(t, c)
}

func TestFileOperations(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 3, BlockSize: 1 << 20, Simple: true})
	su := osUser(t)
	ctx := context.Background()
	admin := c.Client(t)
	if err := admin.Mkdir(ctx, "/user/alice", 0o755, true); err != nil {
		t.Fatal(err)
	}
	if err := admin.SetOwner(ctx, "/user/alice", "alice", "alice"); err != nil {
		t.Fatal(err)
	}
	alice := "user.name=alice"

	// MKDIRS and GETFILESTATUS.
	if r := w.op("PUT", "/user/alice/d/e", "MKDIRS", alice, "permission=750"); r.code != 200 || r.json(t)["boolean"] != true {
		t.Fatalf("MKDIRS: %d %s", r.code, r.body)
	}
	fst := w.op("GET", "/user/alice/d/e", "GETFILESTATUS", alice).json(t)["FileStatus"].(map[string]any)
	if fst["type"] != "DIRECTORY" || fst["permission"] != "750" || fst["owner"] != "alice" || fst["pathSuffix"] != "" ||
		fst["replication"] != 0.0 || fst["blockSize"] != 0.0 {
		t.Fatalf("GETFILESTATUS of a directory: %v", fst)
	}
	for _, k := range []string{"accessTime", "modificationTime", "length", "fileId", "childrenNum", "storagePolicy", "group"} {
		if _, ok := fst[k]; !ok {
			t.Fatalf("FileStatus lacks %s: %v", k, fst)
		}
	}

	// CREATE in two steps, 2.5 blocks; OPEN it back whole and by range.
	data := randBytes(5<<19 + 123)
	r := w.twoStep("PUT", "/user/alice/f", "CREATE", data, alice, "permission=640", "replication=2")
	if r.code != http.StatusCreated || !strings.HasSuffix(r.hdr.Get("Location"), "/user/alice/f") {
		t.Fatalf("CREATE step 2: %d %v %s", r.code, r.hdr, r.body)
	}
	st, err := admin.Stat(ctx, "/user/alice/f")
	if err != nil || st.Size != int64(len(data)) || st.Owner != "alice" {
		t.Fatalf("after CREATE: %+v %v", st, err)
	}
	fst = w.op("GET", "/user/alice/f", "GETFILESTATUS", alice).json(t)["FileStatus"].(map[string]any)
	if fst["type"] != "FILE" || fst["permission"] != "640" || fst["length"] != float64(len(data)) || fst["replication"] != 2.0 ||
		fst["blockSize"] != float64(1<<20) {
		t.Fatalf("GETFILESTATUS of a file: %v", fst)
	}
	if r := w.twoStep("GET", "/user/alice/f", "OPEN", nil, alice); r.code != 200 || !bytes.Equal(r.body, data) {
		t.Fatalf("OPEN: %d, %d bytes (want %d)", r.code, len(r.body), len(data))
	}
	r = w.twoStep("GET", "/user/alice/f", "OPEN", nil, alice, "offset=1048000", "length=2000")
	if r.code != 200 || !bytes.Equal(r.body, data[1048000:1050000]) || r.hdr.Get("Content-Length") != "2000" {
		t.Fatalf("OPEN range: %d %d bytes", r.code, len(r.body))
	}
	if r := w.twoStep("GET", "/user/alice/f", "OPEN", nil, alice, fmt.Sprintf("offset=%d", len(data)-10)); !bytes.Equal(r.body, data[len(data)-10:]) {
		t.Fatalf("OPEN tail: %d %q", r.code, r.body)
	}
	w.twoStep("GET", "/user/alice/f", "OPEN", nil, alice, fmt.Sprintf("offset=%d", len(data)+1)).remote(t, 403, "IOException")
	// noredirect answers the Location in JSON.
	nr := w.op("GET", "/user/alice/f", "OPEN", alice, "noredirect=true")
	loc, _ := nr.json(t)["Location"].(string)
	if nr.code != 200 || !strings.Contains(loc, "/webhdfs/v1/user/alice/f?") {
		t.Fatalf("noredirect: %d %s", nr.code, nr.body)
	}
	if r := w.do("GET", loc, nil); !bytes.Equal(r.body, data) {
		t.Fatalf("OPEN through the noredirect Location: %d", r.code)
	}
	// A second CREATE without overwrite: the file exists.
	w.twoStep("PUT", "/user/alice/f", "CREATE", []byte("x"), alice).remote(t, 403, "FileAlreadyExistsException")
	if r := w.twoStep("PUT", "/user/alice/empty", "CREATE", []byte{}, alice); r.code != 201 {
		t.Fatalf("CREATE empty: %d %s", r.code, r.body)
	}
	if r := w.twoStep("GET", "/user/alice/empty", "OPEN", nil, alice); r.code != 200 || len(r.body) != 0 {
		t.Fatalf("OPEN empty: %d %q", r.code, r.body)
	}

	// GETFILECHECKSUM equals the native client's.
	sum, err := admin.FileChecksum(ctx, "/user/alice/f")
	if err != nil {
		t.Fatal(err)
	}
	fc := w.twoStep("GET", "/user/alice/f", "GETFILECHECKSUM", nil, alice).json(t)["FileChecksum"].(map[string]any)
	if fc["algorithm"] != sum.Algorithm() || fc["bytes"] != sum.String() || fc["length"] != 28.0 {
		t.Fatalf("GETFILECHECKSUM %v, want %s %s", fc, sum.Algorithm(), sum)
	}

	// LISTSTATUS of a directory and of a file.
	ls := w.op("GET", "/user/alice", "LISTSTATUS", alice).json(t)["FileStatuses"].(map[string]any)["FileStatus"].([]any)
	var names []string
	for _, e := range ls {
		names = append(names, e.(map[string]any)["pathSuffix"].(string))
	}
	if strings.Join(names, ",") != "d,empty,f" {
		t.Fatalf("LISTSTATUS names %v", names)
	}
	lf := w.op("GET", "/user/alice/f", "LISTSTATUS", alice).json(t)["FileStatuses"].(map[string]any)["FileStatus"].([]any)
	if len(lf) != 1 || lf[0].(map[string]any)["pathSuffix"] != "" || lf[0].(map[string]any)["type"] != "FILE" {
		t.Fatalf("LISTSTATUS of a file: %v", lf)
	}

	// Content summary, quota usage, quotas.
	cs := w.op("GET", "/user/alice", "GETCONTENTSUMMARY", alice).json(t)["ContentSummary"].(map[string]any)
	if cs["fileCount"] != 2.0 || cs["directoryCount"] != 3.0 || cs["length"] != float64(len(data)) ||
		cs["spaceConsumed"] != float64(2*len(data)) || cs["quota"] != -1.0 || cs["spaceQuota"] != -1.0 {
		t.Fatalf("GETCONTENTSUMMARY %v", cs)
	}
	w.op("PUT", "/user/alice/d", "SETQUOTA", alice, "namespacequota=3").remote(t, 403, "AccessControlException")
	if r := w.op("PUT", "/user/alice/d", "SETQUOTA", "user.name="+su, "namespacequota=3"); r.code != 200 {
		t.Fatalf("SETQUOTA: %d %s", r.code, r.body)
	}
	qu := w.op("GET", "/user/alice/d", "GETQUOTAUSAGE", alice).json(t)["QuotaUsage"].(map[string]any)
	if qu["quota"] != 3.0 || qu["fileAndDirectoryCount"] != 2.0 || qu["spaceQuota"] != -1.0 {
		t.Fatalf("GETQUOTAUSAGE %v", qu)
	}
	w.op("PUT", "/user/alice/d", "MKDIRS", alice) // 3 of 3
	w.op("PUT", "/user/alice/d/x/y", "MKDIRS", alice).remote(t, 403, "NSQuotaExceededException")

	// Home, trash, server defaults.
	if p := w.op("GET", "/", "GETHOMEDIRECTORY", alice).json(t)["Path"]; p != "/user/alice" {
		t.Fatalf("GETHOMEDIRECTORY %v", p)
	}
	if p := w.op("GET", "/user/alice/f", "GETTRASHROOT", alice).json(t)["Path"]; p != "/user/alice/.Trash" {
		t.Fatalf("GETTRASHROOT %v", p)
	}
	sd := w.op("GET", "/", "GETSERVERDEFAULTS", alice).json(t)["FsServerDefaults"].(map[string]any)
	if sd["blockSize"] != float64(1<<20) || sd["bytesPerChecksum"] != 512.0 || sd["replication"] != 3.0 {
		t.Fatalf("GETSERVERDEFAULTS %v", sd)
	}

	// xattrs.
	if r := w.op("PUT", "/user/alice/f", "SETXATTR", alice, "xattr.name=user.color", `xattr.value="blue"`, "flag=CREATE"); r.code != 200 {
		t.Fatalf("SETXATTR: %d %s", r.code, r.body)
	}
	w.op("PUT", "/user/alice/f", "SETXATTR", alice, "xattr.name=user.color", "xattr.value=0x00ff", "flag=CREATE").remote(t, 403, "IOException")
	w.op("PUT", "/user/alice/f", "SETXATTR", alice, "xattr.name=user.color", "xattr.value=0x00ff", "flag=REPLACE")
	xs := w.op("GET", "/user/alice/f", "GETXATTRS", alice, "xattr.name=user.color", "encoding=hex").json(t)["XAttrs"].([]any)
	if len(xs) != 1 || xs[0].(map[string]any)["value"] != "0x00ff" {
		t.Fatalf("GETXATTRS %v", xs)
	}
	if n := w.op("GET", "/user/alice/f", "LISTXATTRS", alice).json(t)["XAttrNames"]; n != `["user.color"]` {
		t.Fatalf("LISTXATTRS %v", n)
	}
	w.op("PUT", "/user/alice/f", "REMOVEXATTR", alice, "xattr.name=user.color")
	if n := w.op("GET", "/user/alice/f", "LISTXATTRS", alice).json(t)["XAttrNames"]; n != `[]` {
		t.Fatalf("LISTXATTRS after remove %v", n)
	}

	// Permissions: bob may read f (640? no: other has nothing).
	bob := "user.name=bob"
	w.twoStep("GET", "/user/alice/f", "OPEN", nil, bob).remote(t, 403, "AccessControlException")
	w.op("GET", "/user/alice/f", "CHECKACCESS", bob, "fsaction=r--").remote(t, 403, "AccessControlException")
	if r := w.op("GET", "/user/alice/f", "CHECKACCESS", alice, "fsaction=rw-"); r.code != 200 {
		t.Fatalf("CHECKACCESS alice: %d %s", r.code, r.body)
	}
	w.op("GET", "/user/alice/f", "CHECKACCESS", alice, "fsaction=rwz").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/user/alice/f", "SETOWNER", alice, "owner=bob").remote(t, 403, "AccessControlException")
	w.twoStep("PUT", "/user/alice/bobs", "CREATE", []byte("b"), bob).remote(t, 403, "AccessControlException")
	if r := w.op("PUT", "/user/alice/f", "SETPERMISSION", alice, "permission=644"); r.code != 200 {
		t.Fatalf("SETPERMISSION: %d %s", r.code, r.body)
	}
	if r := w.twoStep("GET", "/user/alice/f", "OPEN", nil, bob, "length=3"); r.code != 200 || !bytes.Equal(r.body, data[:3]) {
		t.Fatalf("OPEN by bob after chmod: %d", r.code)
	}
	if r := w.op("PUT", "/user/alice/f", "SETOWNER", "user.name="+su, "owner=bob", "group=staff"); r.code != 200 {
		t.Fatalf("SETOWNER by the superuser: %d %s", r.code, r.body)
	}
	if st, _ := admin.Stat(ctx, "/user/alice/f"); st.Owner != "bob" || st.Group != "staff" {
		t.Fatalf("after SETOWNER: %+v", st)
	}
	w.op("PUT", "/user/alice/f", "SETOWNER", "user.name="+su).remote(t, 400, "IllegalArgumentException")

	// SETREPLICATION, SETTIMES.
	if r := w.op("PUT", "/user/alice/f", "SETREPLICATION", bob, "replication=3"); r.json(t)["boolean"] != true {
		t.Fatalf("SETREPLICATION: %s", r.body)
	}
	if r := w.op("PUT", "/user/alice/d", "SETREPLICATION", alice, "replication=3"); r.json(t)["boolean"] != false {
		t.Fatalf("SETREPLICATION of a directory: %s", r.body)
	}
	if r := w.op("PUT", "/user/alice/f", "SETTIMES", bob, "modificationtime=1000000", "accesstime=2000000"); r.code != 200 {
		t.Fatalf("SETTIMES: %d %s", r.code, r.body)
	}
	fst = w.op("GET", "/user/alice/f", "GETFILESTATUS", alice).json(t)["FileStatus"].(map[string]any)
	if fst["modificationTime"] != 1e6 || fst["accessTime"] != 2e6 || fst["replication"] != 3.0 {
		t.Fatalf("after SETTIMES/SETREPLICATION: %v", fst)
	}

	// RENAME: true, then false for a missing source; rename2 raises.
	if r := w.op("PUT", "/user/alice/empty", "RENAME", alice, "destination=/user/alice/d/e/moved"); r.json(t)["boolean"] != true {
		t.Fatalf("RENAME: %s", r.body)
	}
	if r := w.op("PUT", "/user/alice/empty", "RENAME", alice, "destination=/user/alice/x"); r.code != 200 || r.json(t)["boolean"] != false {
		t.Fatalf("RENAME of a missing source: %d %s", r.code, r.body)
	}
	w.op("PUT", "/user/alice/empty", "RENAME", alice, "destination=/user/alice/x", "renameoptions=NONE").remote(t, 404, "FileNotFoundException")
	w.op("PUT", "/user/alice/d/e/moved", "RENAME", alice, "destination=/user/alice/f", "renameoptions=NONE").remote(t, 403, "FileAlreadyExistsException")

	// Symlinks as HDFS by default; DELETE.
	w.op("PUT", "/user/alice/link", "CREATESYMLINK", alice, "destination=/user/alice/f").remote(t, 400, "UnsupportedOperationException")
	w.op("DELETE", "/user/alice/d", "DELETE", alice).remote(t, 403, "PathIsNotEmptyDirectoryException")
	if r := w.op("DELETE", "/user/alice/d", "DELETE", alice, "recursive=true"); r.json(t)["boolean"] != true {
		t.Fatalf("DELETE: %s", r.body)
	}
	if r := w.op("DELETE", "/user/alice/d", "DELETE", alice, "recursive=true"); r.code != 200 || r.json(t)["boolean"] != false {
		t.Fatalf("DELETE of a missing path: %d %s", r.code, r.body)
	}
	if _, err := admin.Stat(ctx, "/user/alice/d"); err == nil {
		t.Fatal("directory still there after DELETE")
	}

	// Delegation tokens in simple mode: null, as Hadoop without security.
	if r := w.op("GET", "/", "GETDELEGATIONTOKEN", alice); r.code != 200 || string(r.body) != `{"Token":null}` {
		t.Fatalf("GETDELEGATIONTOKEN (simple): %d %s", r.code, r.body)
	}
}

func TestErrors(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	if err := c.Client(t).Mkdir(context.Background(), "/private", 0o700, false); err != nil {
		t.Fatal(err)
	}
	msg := w.op("GET", "/nope", "GETFILESTATUS", "user.name=alice").remote(t, 404, "FileNotFoundException")
	if !strings.Contains(msg, "/nope") {
		t.Fatalf("404 message does not name the path: %q", msg)
	}
	// HDFS's own words for a missing path, which clients match.
	for op, want := range map[string]string{
		"GETFILESTATUS":     "File does not exist: /nope/x",
		"LISTSTATUS":        "File /nope/x does not exist.",
		"GETCONTENTSUMMARY": "File does not exist: /nope/x",
		"GETACLSTATUS":      "File does not exist: /nope/x",
	} {
		if m := w.op("GET", "/nope/x", op, "user.name=alice").remote(t, 404, "FileNotFoundException"); m != want {
			t.Errorf("%s of a missing path: %q, want HDFS's %q", op, m, want)
		}
	}
	if m := w.twoStep("GET", "/nope", "OPEN", nil).remote(t, 404, "FileNotFoundException"); m != "File does not exist: /nope" {
		t.Errorf("OPEN of a missing path: %q, want HDFS's %q", m, "File does not exist: /nope")
	}
	if m := w.twoStep("GET", "/", "OPEN", nil).remote(t, 404, "FileNotFoundException"); m != "Path is not a file: /" {
		t.Errorf("OPEN of a directory: %q, want HDFS's %q", m, "Path is not a file: /")
	}
	w.op("GET", "/private", "LISTSTATUS", "user.name=alice").remote(t, 403, "AccessControlException")
	w.op("PUT", "/private/x", "MKDIRS", "user.name=alice").remote(t, 403, "AccessControlException")

	if m := w.op("GET", "/", "FOO").remote(t, 400, "IllegalArgumentException"); m != `Invalid value for webhdfs parameter "op": No enum constant org.apache.hadoop.hdfs.web.resources.GetOpParam.Op.FOO` {
		t.Fatalf("unknown op message %q", m)
	}
	if m := w.op("GET", "/", "mkdirs").remote(t, 400, "IllegalArgumentException"); !strings.HasSuffix(m, "GetOpParam.Op.MKDIRS") {
		t.Fatalf("op of another method: %q", m)
	}
	if m := w.do("GET", w.base+"/", nil).remote(t, 400, "UnsupportedOperationException"); m != "op=NULL is not supported" {
		t.Fatalf("no op: %q", m)
	}
	w.op("PUT", "/x", "MKDIRS", "permission=999").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/x", "MKDIRS", "permission=2000").remote(t, 400, "IllegalArgumentException")
	w.op("GET", "/", "OPEN", "offset=-1").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/x", "CREATE", "replication=many").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/x", "CREATE", "overwrite=maybe").remote(t, 400, "IllegalArgumentException")
	w.op("DELETE", "/x", "DELETE", "recursive=yes").remote(t, 400, "IllegalArgumentException")
	w.op("GET", "/", "GETFILESTATUS", "user.name=a b").remote(t, 400, "IllegalArgumentException")
	w.op("GET", "/"+strings.Repeat("a", 300), "GETFILESTATUS").remote(t, 403, "IOException")
	w.op("PUT", "/x", "RENAME").remote(t, 400, "IllegalArgumentException")
	w.twoStep("POST", "/x", "APPEND", []byte("x")).remote(t, 404, "FileNotFoundException")
	w.op("PUT", "/", "SETECPOLICY").remote(t, 400, "IllegalArgumentException")
	w.op("GET", "/", "GETSNAPSHOTDIFFLISTING", "snapshotdiffindex=-2").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/", "SETSTORAGEPOLICY").remote(t, 400, "IllegalArgumentException")
	w.op("POST", "/", "TRUNCATE").remote(t, 400, "IllegalArgumentException")
	w.op("POST", "/", "CONCAT").remote(t, 400, "IllegalArgumentException")
	w.op("PUT", "/", "SETACL", "aclspec=user:bob:rwz").remote(t, 400, "IllegalArgumentException")
	w.do("PUT", w.base+"/x?op=MKDIRS&"+strings.Repeat("a=b&", 300), nil).remote(t, 400, "IllegalArgumentException")
	w.do("HEAD", w.base+"/x?op=GETFILESTATUS", nil)

	// doas: only proxy users (the superuser and proxy_users) may.
	w.op("GET", "/", "GETHOMEDIRECTORY", "user.name=alice", "doas=bob").remote(t, 403, "AuthorizationException")
	if p := w.op("GET", "/", "GETHOMEDIRECTORY", "user.name="+osUser(t), "doas=bob").json(t)["Path"]; p != "/user/bob" {
		t.Fatalf("doas by the superuser: %v", p)
	}
	// The datanode side serves only redirected URLs.
	dn := c.DataNode(0).HTTPAddr()
	w.do("GET", "http://"+dn+"/webhdfs/v1/x?op=OPEN&user.name=alice", nil).remote(t, 401, "SecurityException")
	w.do("GET", "http://"+dn+"/webhdfs/v1/x?op=GETFILESTATUS&delegation=x", nil).remote(t, 400, "UnsupportedOperationException")
}

func TestListStatusBatch(t *testing.T) {
	c, w := startCluster(t, testcluster.Options{DataNodes: 1, Simple: true})
	ctx := context.Background()
	fs := c.Client(t)
	const n = 1203
	for i := range n {
		if err := fs.Mkdir(ctx, fmt.Sprintf("/many/d%05d", i), 0o755, true); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	after := ""
	for pages := 0; ; pages++ {
		kv := []string{}
		if after != "" {
			kv = append(kv, "startAfter="+after)
		}
		dl := w.op("GET", "/many", "LISTSTATUS_BATCH", kv...).json(t)["DirectoryListing"].(map[string]any)
		entries := dl["partialListing"].(map[string]any)["FileStatuses"].(map[string]any)["FileStatus"].([]any)
		for _, e := range entries {
			got = append(got, e.(map[string]any)["pathSuffix"].(string))
		}
		rem := int(dl["remainingEntries"].(float64))
		if rem != n-len(got) {
			t.Fatalf("page %d: remainingEntries %d, want %d", pages, rem, n-len(got))
		}
		if rem == 0 {
			break
		}
		after = got[len(got)-1]
	}
	if len(got) != n || got[0] != "d00000" || got[n-1] != fmt.Sprintf("d%05d", n-1) {
		t.Fatalf("batched listing: %d entries, first %s", len(got), got[0])
	}
	all := w.op("GET", "/many", "LISTSTATUS").json(t)["FileStatuses"].(map[string]any)["FileStatus"].([]any)
	if len(all) != n {
		t.Fatalf("LISTSTATUS: %d entries, want %d", len(all), n)
	}
}
