package webui_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"smarth/internal/testenv"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/resourcemanager"
	"smarth/internal/rpc/mrpb"
	"smarth/internal/testcluster"
	"smarth/internal/testcluster/mrtest"
)

// -screens refreshes docs/screens/*.png (shown by docs/console.md). Off,
// the screenshots go to a temporary directory: every page still has to
// render to an image, but a plain `go test` does not rewrite tracked files
// (each run has new job ids and times, so the images always differ).
var writeScreens = flag.Bool("screens", false, "write the console screenshots to docs/screens")

// chromium finds a Chromium or Chrome binary: $SMARTH_CHROMIUM, else the
// usual names on PATH.
func chromium() string {
	if p := os.Getenv("SMARTH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestConsoleInBrowser starts a whole cluster in the test process (a
// namenode, two datanodes on two racks, a resource manager and a node
// manager beside each datanode, every daemon with its real HTTP server),
// runs one job to its end and leaves another running, and drives headless
// Chromium through every console page of every daemon: each page must
// answer 200 and render non-empty content, log no console error or
// exception and load no sub-resource that fails; every link on a page
// that points into the cluster is followed (pages are visited in the
// browser in turn, other content fetched) and must not answer 4xx/5xx; a
// link that leaves the cluster fails the test, since the console must
// work with no way out. Each named page is saved as a screenshot.
func TestConsoleInBrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		msg := "no Chromium binary found (set $SMARTH_CHROMIUM or put chromium on PATH; .ci/run installs the distribution's chromium package)"
		// .ci/run installs it: a CI run that skips here would pass
		// without ever opening the console.
		testenv.Missing(t, "%s", msg)
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	start := time.Now()
	cl := startConsoleCluster(t)
	t.Logf("cluster with a finished and a running job ready in %v", time.Since(start).Round(time.Millisecond))

	shots := t.TempDir()
	if *writeScreens {
		shots = filepath.Join("..", "..", "docs", "screens")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	b := newBrowser(t, ctx, bin, cl.origins())
	b.signIn(cl)
	for _, p := range cl.pages() {
		b.visit(p.url, p.shot, shots)
	}
	// The namenode leads to the resource manager's jobs (its nav link and
	// the running-jobs link), so an operator can go from files to jobs.
	nnLinks := b.links["http://"+cl.dfs.NameNodeHTTPAddr()+"/"]
	for _, want := range []string{"http://" + cl.mr.RM().HTTPAddr() + "/", "http://" + cl.mr.RM().HTTPAddr() + "/?state=RUNNING"} {
		if !slices.Contains(nnLinks, want) {
			t.Errorf("the namenode overview does not link to %s (links: %v)", want, nnLinks)
		}
	}
	b.crawl(shots)
	b.fileManager(cl, shots)
	t.Logf("%d pages seen in the browser, %d links checked, in %v (screenshots in %s)",
		len(b.visited), len(b.checked), time.Since(start).Round(time.Millisecond), shots)
}

// consoleCluster is the cluster under test and what the pages name.
type consoleCluster struct {
	dfs                *testcluster.Cluster
	mr                 *mrtest.Cluster
	dir, file          string // a DFS directory and a file in it
	finished, running  string // job ids
	attemptNM, attempt string // node manager HTTP address and id of a finished attempt
}

// startConsoleCluster starts the daemons and the two jobs.
func startConsoleCluster(t *testing.T) *consoleCluster {
	// The resource manager's web address is fixed before the namenode
	// starts, so the namenode's console can link to its jobs.
	rmWeb := testenv.RestartablePorts(t, 1)[0]
	dfs := testcluster.Start(t, testcluster.Options{DataNodes: 2, Racks: []string{"/rack-a", "/rack-b"},
		NameNode: map[string]any{"resourcemanager_web": rmWeb}})
	u := "smarth"
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	cl := &consoleCluster{dfs: dfs, dir: "/user/" + u + "/console"}
	cl.file = cl.dir + "/words.txt"
	fs := dfs.Client(t)
	if err := fs.Mkdir(t.Context(), cl.dir, 0o755, true); err != nil {
		t.Fatal(err)
	}
	// Two blocks (the test cluster's block size is 1 MiB), so the file
	// page lists more than one block and the job has two maps.
	var words strings.Builder
	for words.Len() < 1<<20+1000 {
		fmt.Fprintf(&words, "the quick brown fox %d jumps over the lazy dog\n", words.Len())
	}
	writeDFS(t, fs, cl.file, words.String())

	g := gate{open: make(chan struct{})}
	reg := mapreduce.NewRegistry(append(apps.AllWith(apps.Options{Out: io.Discard}), g)...)
	cl.mr = mrtest.Start(t, mrtest.Options{DFS: dfs, Registry: reg, Hosts: []string{"dn1", "dn2"},
		RM: func(c *resourcemanager.Config) { c.HTTPAddr = rmWeb }})
	// Registered after mrtest's cleanup, so it runs first: the running
	// job's maps return and the node managers can stop.
	t.Cleanup(func() { close(g.open) })
	jc := cl.mr.Client()
	var err error
	cl.finished, err = jc.Submit(t.Context(), "wordcount", map[string]string{"input": cl.file, "output": cl.dir + "/wordcount"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := jc.Wait(t.Context(), cl.finished); err != nil || res.State != mapreduce.StateSucceeded {
		t.Fatalf("wordcount: %+v, %v", res, err)
	}
	st, err := jc.Status(t.Context(), cl.finished)
	if err != nil {
		t.Fatal(err)
	}
	at := firstAttempt(t, st)
	cl.attemptNM, cl.attempt = at.GetNodeHttpAddr(), at.GetAttemptId()

	cl.running, err = jc.Submit(t.Context(), "gate", map[string]string{"input": cl.file, "output": cl.dir + "/gate"})
	if err != nil {
		t.Fatal(err)
	}
	cl.mr.WaitFor(t, "the gate job's maps to run", func() bool {
		st, err := jc.Status(t.Context(), cl.running)
		return err == nil && st.GetMapsRunning() > 0
	})
	return cl
}

func writeDFS(t *testing.T, fs *client.FileSystem, path, data string) {
	t.Helper()
	w, err := fs.Create(t.Context(), path, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func firstAttempt(t *testing.T, st *mrpb.JobStatus) *mrpb.AttemptStatus {
	t.Helper()
	for _, task := range st.GetTasks() {
		for _, at := range task.GetAttempts() {
			if at.GetNodeHttpAddr() != "" {
				return at
			}
		}
	}
	t.Fatalf("job %s: no attempt with a node manager address: %v", st.GetJobId(), st)
	return nil
}

// origins are the base URLs of every daemon's web server.
func (cl *consoleCluster) origins() []string {
	o := []string{"http://" + cl.dfs.NameNodeHTTPAddr(), "http://" + cl.mr.RM().HTTPAddr()}
	for i := range cl.dfs.NumDataNodes() {
		o = append(o, "http://"+cl.dfs.DataNode(i).HTTPAddr(), "http://"+cl.mr.NodeManager(i).HTTPAddr())
	}
	return o
}

type page struct{ shot, url string }

// pages are the pages visited by name (and saved as screenshots); the
// crawl finds the rest through their links.
func (cl *consoleCluster) pages() []page {
	nn, rm := "http://"+cl.dfs.NameNodeHTTPAddr(), "http://"+cl.mr.RM().HTTPAddr()
	dn, nm := "http://"+cl.dfs.DataNode(0).HTTPAddr(), "http://"+cl.attemptNM
	q := url.QueryEscape
	return []page{
		{"namenode-overview", nn + "/"},
		{"namenode-explorer", nn + "/explorer?path=" + q(cl.dir)},
		{"namenode-file", nn + "/file?path=" + q(cl.file)},
		{"namenode-files", nn + "/files?path=" + q(cl.dir)},
		{"namenode-journal", nn + "/journal"},
		{"namenode-conf", nn + "/conf"},
		{"namenode-healthz", nn + "/healthz"},
		{"datanode-overview", dn + "/"},
		{"datanode-conf", dn + "/conf"},
		{"datanode-healthz", dn + "/healthz"},
		{"resourcemanager-jobs", rm + "/"},
		{"resourcemanager-running", rm + "/?state=RUNNING"},
		{"resourcemanager-job-finished", rm + "/job/" + cl.finished},
		{"resourcemanager-job-running", rm + "/job/" + cl.running},
		{"resourcemanager-nodes", rm + "/nodes"},
		{"resourcemanager-rest-apps", rm + "/ws/v1/cluster/apps"},
		{"resourcemanager-conf", rm + "/conf"},
		{"resourcemanager-healthz", rm + "/healthz"},
		{"nodemanager-tasks", nm + "/"},
		{"nodemanager-logs", nm + "/logs/" + cl.finished + "/"},
		{"nodemanager-task-log", nm + "/logs/" + cl.finished + "/" + cl.attempt + "/stderr"},
		{"nodemanager-conf", nm + "/conf"},
		{"nodemanager-healthz", nm + "/healthz"},
	}
}

// gate is a map-only app whose maps wait until the test ends: a job that
// is running while the browser looks at it.
type gate struct{ open chan struct{} }

func (gate) Name() string              { return "gate" }
func (gate) Description() string       { return "maps that wait until the test ends" }
func (gate) Params() []mapreduce.Param { return nil }
func (g gate) Build(p map[string]string) (*mapreduce.Job, error) {
	return &mapreduce.Job{Params: p, Input: []string{p["input"]}, Output: p["output"],
		NewMapper: func() mapreduce.Mapper { return gateMapper(g) }}, nil
}

type gateMapper gate

func (g gateMapper) Setup(ctx mapreduce.TaskContext) error {
	fmt.Fprintf(mapreduce.TaskStderr(ctx), "map %d waits for the browser test to end\n", ctx.TaskIndex())
	select {
	case <-g.open:
	case <-ctx.Done():
	}
	return nil
}

func (gateMapper) Map(ctx mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	return out.Emit(line, nil)
}

// browser is one headless Chromium tab and what it has seen.
type browser struct {
	t       *testing.T
	ctx     context.Context
	origins []string
	hc      *http.Client

	mu       sync.Mutex // guards problems: written by the tab's event goroutine
	problems []string

	visited map[string]bool     // pages loaded in the browser
	checked map[string]string   // link -> its content type, once fetched
	links   map[string][]string // page -> the links it shows
	queue   []string            // pages found through links, not yet visited
}

func newBrowser(t *testing.T, ctx context.Context, bin string, origins []string) *browser {
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(bin), chromedp.WindowSize(1280, 800), chromedp.UserDataDir(t.TempDir()))
	if os.Geteuid() == 0 {
		// Chromium refuses to start its sandbox as root (CI runs as
		// root); the pages are the test's own.
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	b := &browser{t: t, origins: origins, hc: &http.Client{Timeout: 20 * time.Second},
		visited: map[string]bool{}, checked: map[string]string{}, links: map[string][]string{}}
	tctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(b.onEvent))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b.ctx = tctx
	started := time.Now()
	if err := chromedp.Do(tctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Logf("%s started in %v", bin, time.Since(started).Round(time.Millisecond))
	return b
}

// signIn gives the browser and the link checker the test user's
// credential, as a person would: the resource manager's and node
// managers' pages show jobs and logs only to their owner, and answer 401
// with a basic-auth challenge, which the browser meets with the
// credential as password (Fetch.authRequired, what a person types into
// the prompt); the link checker sends it as a bearer token.
func (b *browser) signIn(cl *consoleCluster) {
	t := b.t
	u := "smarth"
	if cu, err := user.Current(); err == nil {
		u = cu.Username
	}
	cred := cl.dfs.Credential(u)
	b.hc.Transport = bearer{cred: cred, next: http.DefaultTransport}
	paused := chromedp.Events(b.ctx, fetch.RequestPaused)
	challenges := chromedp.Events(b.ctx, fetch.AuthRequired)
	call := func(f func(ctx context.Context, tg *chromedp.Target) error) {
		if err := chromedp.Do(b.ctx, chromedp.Func(f)); err != nil && b.ctx.Err() == nil {
			t.Logf("answering the browser's request: %v", err)
		}
	}
	// Every request is paused once Fetch is on; each goes on unchanged.
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			call(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				return err
			})
		}
	}()
	go func() {
		for ev, err := range challenges {
			if err != nil {
				return
			}
			call(func(ctx context.Context, tg *chromedp.Target) error {
				_, err := cdp.Call(ctx, tg, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID,
					AuthChallengeResponse: &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials,
						Username: u, Password: cred}})
				return err
			})
		}
	}()
	handle := true
	if err := chromedp.Do(b.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &handle})
		return err
	})); err != nil {
		t.Fatalf("enable the browser's sign-in: %v", err)
	}
}

// bearer sends a credential with every request.
type bearer struct {
	cred string
	next http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.cred)
	return b.next.RoundTrip(r)
}

// onEvent records what a user would see as an error in the DevTools
// console: console.error/assert calls, uncaught exceptions, browser log
// errors (such as a failed resource load) and sub-resources that answer
// 4xx/5xx or fail to load. It runs on the tab's event goroutine, so it
// only appends.
func (b *browser) onEvent(ev any) {
	var p string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			p = fmt.Sprintf("console.%s(%s)", ev.Type, strings.Join(args, ", "))
		}
	case *runtime.EventExceptionThrown:
		p = "uncaught exception: " + ev.ExceptionDetails.Text
		if ex := ev.ExceptionDetails.Exception; ex != nil {
			p += " " + ex.Description
		}
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			p = fmt.Sprintf("browser log error (%s): %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
		}
	case *network.EventResponseReceived:
		if ev.Response.Status >= 400 {
			p = fmt.Sprintf("%s %s answered %d", ev.Type, ev.Response.URL, ev.Response.Status)
		}
	case *network.EventLoadingFailed:
		if !ev.Canceled {
			p = fmt.Sprintf("%s failed to load: %s", ev.Type, ev.ErrorText)
		}
	}
	if p != "" {
		b.mu.Lock()
		b.problems = append(b.problems, p)
		b.mu.Unlock()
	}
}

func (b *browser) takeProblems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// pageInfo is what the page shows, read in the page.
type pageInfo struct {
	Main  bool     `json:"main"`  // a console page: <main> with a title
	Title string   `json:"title"` // <main>'s <h1>
	Text  int      `json:"text"`  // characters of content besides the title
	Links []string `json:"links"` // every <a href>, resolved
}

const readPage = `(() => {
  const m = document.querySelector('main'), h = m && m.querySelector('h1');
  const all = (m || document.body).innerText.trim().length;
  return {main: !!m, title: h ? h.innerText.trim() : '',
          text: all - (h ? h.innerText.trim().length : 0),
          links: Array.from(document.querySelectorAll('a[href]'), a => a.href)};
})()`

// visit loads u in the browser, checks it rendered with no error, saves a
// screenshot named shot (if any) and checks the page's links.
func (b *browser) visit(u, shot, dir string) {
	t := b.t
	t.Helper()
	b.visited[u] = true
	b.takeProblems() // anything left from the page before belongs to it
	resp, err := chromedp.RunResponse(b.ctx, chromedp.Navigate(u))
	if err != nil {
		t.Errorf("%s: %v", u, err)
		return
	}
	if resp.Status != http.StatusOK {
		t.Errorf("%s: HTTP %d, want 200", u, resp.Status)
	}
	info, err := chromedp.Run(b.ctx, chromedp.Evaluate[pageInfo](readPage))
	if err != nil {
		t.Errorf("%s: read the page: %v", u, err)
		return
	}
	b.links[u] = info.Links
	switch {
	case resp.MimeType == "text/html" && (!info.Main || info.Title == ""):
		t.Errorf("%s: an HTML page without the console frame (<main> with an <h1>)", u)
	case info.Text == 0:
		t.Errorf("%s: renders no content", u)
	}
	if shot != "" {
		png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Errorf("%s: screenshot: %v", u, err)
		} else if err := os.WriteFile(filepath.Join(dir, shot+".png"), png, 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, p := range b.takeProblems() {
		t.Errorf("%s: %s", u, p)
	}
	for _, l := range info.Links {
		b.checkLink(u, l)
	}
}

// checkLink fetches a link found on page from; a console page among them
// is queued for the browser.
func (b *browser) checkLink(from, link string) {
	t := b.t
	l, err := url.Parse(link)
	if err != nil {
		t.Errorf("%s: bad link %q: %v", from, link, err)
		return
	}
	l.Fragment = ""
	link = l.String()
	if _, done := b.checked[link]; done {
		return
	}
	if !slices.Contains(b.origins, l.Scheme+"://"+l.Host) {
		t.Errorf("%s: link %s leaves the cluster (the console must work with no way out)", from, link)
		b.checked[link] = ""
		return
	}
	resp, err := b.hc.Get(link)
	if err != nil {
		t.Errorf("%s: link %s: %v", from, link, err)
		b.checked[link] = ""
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	b.checked[link] = ct
	if resp.StatusCode >= 400 {
		t.Errorf("%s: broken link %s: %s", from, link, resp.Status)
		return
	}
	if strings.HasPrefix(ct, "text/html") && !b.visited[link] {
		b.queue = append(b.queue, link)
	}
}

// maxCrawl bounds the pages reached through links: the cluster is small,
// so more means a page links to an endless family of URLs.
const maxCrawl = 150

// crawl visits, in the browser, every console page that links lead to and
// no named page covered, checking their links in turn.
func (b *browser) crawl(dir string) {
	n := 0
	for len(b.queue) > 0 {
		u := b.queue[0]
		b.queue = b.queue[1:]
		if b.visited[u] {
			continue
		}
		if n++; n > maxCrawl {
			b.t.Errorf("more than %d pages reached through links (next: %s)", maxCrawl, u)
			return
		}
		b.visit(u, "", dir)
	}
}

// fileManager drives the namenode's file manager (/files) as a user
// would: signs in (secure cluster: the user's credential; simple: a user
// name), makes a directory, uploads a file through the page (WebHDFS
// CREATE at the namenode, the bytes to a datanode), views it, downloads it
// and compares it byte for byte, then deletes it; the native client checks
// each step, and the page must log no error on the way.
func (b *browser) fileManager(cl *consoleCluster, shots string) {
	t := b.t
	t.Helper()
	u := path.Base(path.Dir(cl.dir)) // /user/<u>/console
	dir := t.TempDir()
	var text strings.Builder
	for i := 0; text.Len() < 300<<10; i++ {
		fmt.Fprintf(&text, "line %06d: uploaded through the console, \u00e9t\u00e9 %x\n", i, i*7919)
	}
	data := []byte(text.String())
	local := filepath.Join(dir, "upload.txt")
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	downloads := filepath.Join(dir, "downloads")
	if err := os.Mkdir(downloads, 0o755); err != nil {
		t.Fatal(err)
	}
	nn := "http://" + cl.dfs.NameNodeHTTPAddr()
	home := "/user/" + u
	fsys := cl.dfs.Client(t)
	ctx := b.ctx
	poll := func(what, expr string) {
		t.Helper()
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if _, err := chromedp.Run(pctx, chromedp.Poll[bool](expr)); err != nil {
			msg, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('msg').textContent`))
			t.Fatalf("file manager: waiting for %s: %v (page says %q)", what, err, msg)
		}
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("file manager: %s: %v", what, err)
		}
	}
	b.takeProblems()
	do("open /files", chromedp.Navigate(nn+"/files?path="+url.QueryEscape(home)))
	secure, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('files').dataset.secure === 'true'`))
	if err != nil {
		t.Fatal(err)
	}
	if secure {
		do("sign in", chromedp.SendKeys(chromedp.CSS("#cred"), cl.dfs.Credential(u)), chromedp.Click(chromedp.CSS("#signin")))
		poll("sign-in", `document.getElementById('whoami').textContent === 'signed in as `+u+`'`)
	} else {
		do("choose the user", chromedp.SetValue(chromedp.CSS("#user"), u), chromedp.Click(chromedp.CSS("#signin")))
	}
	poll("the listing", `document.querySelector('#listing tr[data-name="console"]') !== null`)

	do("mkdir", chromedp.SendKeys(chromedp.CSS("#dirname"), "uploads"), chromedp.Click(chromedp.CSS("#mkdir button")))
	poll("the new directory", `document.querySelector('#listing tr[data-name="uploads"] a') !== null`)
	if st, err := fsys.Stat(ctx, home+"/uploads"); err != nil || !st.IsDir || st.Owner != u {
		t.Fatalf("after mkdir in the page: %+v, %v", st, err)
	}
	// Follow the directory's link (navigating, not clicking: a poll
	// across a page load loses its JavaScript context).
	link, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#listing tr[data-name="uploads"] a').href`))
	if err != nil {
		t.Fatal(err)
	}
	do("open the directory", chromedp.Navigate(link))
	poll("the empty directory", `document.querySelector('#listing tbody td') !== null`)

	do("upload", chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{local}), chromedp.Click(chromedp.CSS("#uploadbtn")))
	poll("the uploaded file", `document.querySelector('#listing tr[data-name="upload.txt"]') !== null`)
	got := readDFS(t, fsys, home+"/uploads/upload.txt")
	if !bytes.Equal(got, data) {
		t.Fatalf("uploaded through the page: the file system holds %d bytes, want %d identical", len(got), len(data))
	}

	do("view", chromedp.Click(chromedp.CSS(`#listing tr[data-name="upload.txt"] button.view`)))
	poll("the view", `!document.getElementById('view').hidden`)
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('view').textContent`))
	if err != nil || shown != string(data[:64<<10]) {
		t.Fatalf("view shows %d characters that are not the file's first 64 KiB (%v)", len(shown), err)
	}
	if png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		os.WriteFile(filepath.Join(shots, "namenode-files-upload.png"), png, 0o644)
	}

	progress := chromedp.Events(ctx, cdpbrowser.DownloadProgress)
	do("download",
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: downloads, EventsEnabled: ptr(true)})
			return err
		}),
		chromedp.Click(chromedp.CSS(`#listing tr[data-name="upload.txt"] button.download`)))
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var saved string
	for ev, err := range progress {
		if err != nil || dctx.Err() != nil {
			t.Fatalf("file manager: waiting for the download: %v %v", err, dctx.Err())
		}
		if ev.State == cdpbrowser.DownloadProgressStateCanceled {
			t.Fatal("file manager: the download was cancelled")
		}
		if ev.State == cdpbrowser.DownloadProgressStateCompleted {
			saved = filepath.Join(downloads, ev.GUID)
			break
		}
	}
	if back, err := os.ReadFile(saved); err != nil || !bytes.Equal(back, data) {
		t.Fatalf("downloaded through the page: %d bytes, want the %d uploaded (%v)", len(back), len(data), err)
	}

	// The page asks before deleting; the user says yes.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(window.confirm = () => true, true)`)); err != nil {
		t.Fatal(err)
	}
	do("delete", chromedp.Click(chromedp.CSS(`#listing tr[data-name="upload.txt"] button.delete`)))
	poll("the file to go", `document.querySelector('#listing tr[data-name="upload.txt"]') === null && document.getElementById('msg').textContent.startsWith('deleted')`)
	if _, err := fsys.Stat(ctx, home+"/uploads/upload.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after delete in the page: %v", err)
	}
	for _, p := range b.takeProblems() {
		t.Errorf("file manager: %s", p)
	}
}

func readDFS(t *testing.T, fsys *client.FileSystem, p string) []byte {
	t.Helper()
	r, err := fsys.Open(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ptr[T any](v T) *T { return &v }
