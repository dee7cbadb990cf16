package chaos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"smarth/internal/client"
	"smarth/internal/testcluster"
)

// Each test here keeps one kind of promise the chaos load records, breaks
// it with a second client behind the load's back (as a lost edit or
// replica would), and demands that the run reports that loss, with the
// file's history. An in-process cluster keeps them fast; the same checks
// run under SIGKILLs in TestChaosLosesNothing.

// checkRun is a chaos run's bookkeeping over an in-process cluster, with
// the load's own client and a second one that breaks promises behind the
// load's back.
func checkRun(t *testing.T) (*run, *client.FileSystem, *client.FileSystem) {
	t.Helper()
	c := testcluster.Start(t, testcluster.Options{DataNodes: 3})
	o := Options{Dir: "/chaos/check", MaxFileSize: 64 << 10, Home: t.TempDir()}
	o.setDefaults()
	r := &run{o: o, rep: &Report{Ops: map[string]*OpCount{}}, files: map[int]*ackedFile{}, busy: map[int]bool{}}
	load, behind := c.Client(t), c.Client(t)
	if err := load.Mkdir(context.Background(), o.Dir, 0o755, true); err != nil {
		t.Fatal(err)
	}
	return r, load, behind
}

// putOne makes the load put one non-empty file and returns its record,
// kept busy so no random draw of the load takes it.
func putOne(t *testing.T, r *run, load *client.FileSystem, seed uint64) *ackedFile {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 2))
	for range 8 { // sizes are random: want a non-empty file
		if !r.put(context.Background(), rng, load) {
			t.Fatal("put failed")
		}
		r.mu.Lock()
		f := r.files[r.nextID]
		r.busy[f.id] = true
		r.mu.Unlock()
		if f.size > 0 {
			return f
		}
	}
	t.Fatal("no non-empty put")
	return nil
}

// verifyNow runs the final verification with a bound no check should need
// (every check here answers at once; a timeout shows as "not readable").
func verifyNow(t *testing.T, r *run, load *client.FileSystem) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r.verify(ctx, load)
}

// wantLost fails unless exactly one loss names p and says want, and it
// carries the file's history (its put at least, and op if given).
func wantLost(t *testing.T, r *run, p, want, op string) {
	t.Helper()
	var b bytes.Buffer
	r.rep.Print(&b)
	t.Logf("report:\n%s", b.String())
	if len(r.rep.Lost) != 1 {
		t.Fatalf("%d losses reported, want 1 naming %s", len(r.rep.Lost), p)
	}
	l := r.rep.Lost[0]
	if !strings.Contains(l.What, p) || !strings.Contains(l.What, want) {
		t.Fatalf("loss %q: want it to name %s and say %q", l.What, p, want)
	}
	ops := map[string]bool{}
	for _, e := range l.History {
		ops[e.Op] = true
	}
	if !ops["put"] || (op != "" && !ops[op]) {
		t.Fatalf("loss %q printed without its history (want put and %q): %v", l.What, op, l.History)
	}
	if !strings.Contains(b.String(), "LOST "+l.What) || !strings.Contains(b.String(), l.History[0].String()) {
		t.Fatalf("the printed report does not show the loss and its history:\n%s", b.String())
	}
}

func wantKept(t *testing.T, r *run) {
	t.Helper()
	if len(r.rep.Lost) > 0 || len(r.rep.Unverifiable) > 0 {
		var b bytes.Buffer
		r.rep.Print(&b)
		t.Fatalf("nothing was broken, yet:\n%s", b.String())
	}
}

// The case: an acknowledged put deleted behind the harness's
// back, then the load draws a delete of it. Its "does not exist" is the
// loss, not a delete that may have happened.
func TestChaosReportsDeleteOfVanishedFile(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	f := putOne(t, r, load, 1)
	if err := behind.Delete(ctx, f.path, false); err != nil {
		t.Fatal(err)
	}
	// A fault between the put and the delete is printed in the history.
	r.rep.Faults = append(r.rep.Faults, Fault{At: time.Now(), Daemon: "namenode", PID: 4242, Down: time.Second})
	r.deleteFile(ctx, load, f)
	verifyNow(t, r, load)
	wantLost(t, r, f.path, "delete found it gone", "delete")
	var b bytes.Buffer
	r.rep.Print(&b)
	put, del := strings.Index(b.String(), "put    "+f.path), strings.Index(b.String(), "delete "+f.path)
	fault := strings.Index(b.String(), "fault  SIGKILL namenode (pid 4242)")
	if !(put < fault && fault < del) {
		t.Fatalf("the fault between the put and the delete is not printed between them:\n%s", b.String())
	}
}

// Put content: rewritten with other bytes is lost at the end; deleted, the
// next get reports it at once.
func TestChaosReportsPutContentLost(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	f := putOne(t, r, load, 3)
	if !r.getFile(ctx, load, f) {
		t.Fatal("control: the get of an intact file failed")
	}
	w, err := behind.Create(ctx, f.path, client.CreateOptions{Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("not what was acknowledged"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	verifyNow(t, r, load)
	wantLost(t, r, f.path, "content differs", "get")

	r, load, behind = checkRun(t)
	f = putOne(t, r, load, 5)
	if err := behind.Delete(ctx, f.path, false); err != nil {
		t.Fatal(err)
	}
	r.getFile(ctx, load, f)
	wantLost(t, r, f.path, "get found it gone", "get")
}

// Rename, new name: the file gone from the name an acknowledged rename
// gave it is lost at once (not retried until the settle time ends).
func TestChaosReportsRenamedFileLost(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	f := putOne(t, r, load, 7)
	old := f.path
	if !r.renameFile(ctx, load, f, path.Join(r.o.Dir, "renamed0", "x")) {
		t.Fatal("rename failed")
	}
	if err := behind.Delete(ctx, f.path, false); err != nil {
		t.Fatal(err)
	}
	verifyNow(t, r, load)
	wantLost(t, r, f.path, "gone", "rename")
	if strings.Contains(r.rep.Lost[0].What, old) {
		t.Fatalf("loss names the old name: %q", r.rep.Lost[0].What)
	}
}

// Rename, old name: a file back under the name an acknowledged rename
// moved it from is a broken promise (a rename half undone).
func TestChaosReportsRenameOldNameBack(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	f := putOne(t, r, load, 9)
	old := f.path
	if !r.renameFile(ctx, load, f, path.Join(r.o.Dir, "renamed1", "y")) {
		t.Fatal("rename failed")
	}
	verifyNow(t, r, load)
	wantKept(t, r)

	w, err := behind.Create(ctx, old, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r.rep.Lost = nil
	verifyNow(t, r, load)
	wantLost(t, r, old, "old name of an acknowledged rename", "rename")
}

// Delete: an acknowledged delete whose file comes back is lost.
func TestChaosReportsDeleteUndone(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	f := putOne(t, r, load, 11)
	if !r.deleteFile(ctx, load, f) {
		t.Fatal("delete failed")
	}
	verifyNow(t, r, load)
	wantKept(t, r)
	w, err := behind.Create(ctx, f.path, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	verifyNow(t, r, load)
	wantLost(t, r, f.path, "acknowledged delete", "delete")
}

// A delete that failed in doubt (the connection broke after the request
// left) leaves the file whole or gone: whole it is checked as any file;
// gone it is reported unverifiable, never kept. A delete refused before
// it left (connection refused) changes nothing: gone is then lost.
func TestChaosDeleteInDoubt(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	broken := status.Error(codes.Unavailable, "error reading from server: EOF")
	refused := status.Error(codes.Unavailable, "cannot reach the namenode at 127.0.0.1:1: connection error: desc = \"transport: Error while dialing: dial tcp 127.0.0.1:1: connect: connection refused\"")

	whole, gone, notSent := putOne(t, r, load, 13), putOne(t, r, load, 15), putOne(t, r, load, 17)
	r.recordDelete(whole, broken)
	r.recordDelete(gone, broken)
	r.recordDelete(notSent, refused)
	for _, f := range []*ackedFile{gone, notSent} {
		if err := behind.Delete(ctx, f.path, false); err != nil {
			t.Fatal(err)
		}
	}
	verifyNow(t, r, load)
	if len(r.rep.Unverifiable) != 1 || !strings.Contains(r.rep.Unverifiable[0].What, gone.path) {
		t.Fatalf("unverifiable = %v; want exactly %s", r.rep.Unverifiable, gone.path)
	}
	wantLost(t, r, notSent.path, "gone", "delete")
	if r.rep.Acked != 2 {
		t.Fatalf("acked verified = %d; want 2 (the unverifiable one is not counted as verified)", r.rep.Acked)
	}
}

// A rename that failed in doubt leaves the file under exactly one of its
// names: under both, a copy was made or a rename half undone.
func TestChaosRenameInDoubt(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	f := putOne(t, r, load, 19)
	f.alt = path.Join(r.o.Dir, "renamed2", "z")
	verifyNow(t, r, load)
	wantKept(t, r)
	if err := behind.Mkdir(ctx, path.Dir(f.alt), 0o755, true); err != nil {
		t.Fatal(err)
	}
	w, err := behind.Create(ctx, f.alt, client.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	verifyNow(t, r, load)
	wantLost(t, r, f.alt, "target of a failed rename", "")
}

// Job output: a succeeded job's output verified against its counts;
// deleted behind the load's back it is lost at once, and a changed count
// is lost too.
func TestChaosReportsJobOutputLost(t *testing.T) {
	r, load, behind := checkRun(t)
	ctx := context.Background()
	out := path.Join(r.o.Dir, "jobs", "j0000", "out")
	put := func(name, text string) {
		w, err := behind.Create(ctx, path.Join(out, name), client.CreateOptions{Overwrite: true})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(text))
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := behind.Mkdir(ctx, out, 0o755, true); err != nil {
		t.Fatal(err)
	}
	put("part-r-00000", "w1\t3\nw2\t5\n")
	put("part-r-00001", "w3\t1\n")
	put("_SUCCESS", "")
	j := newJob(&ackedJob{id: "job_1_0001", app: "wordcount", output: out, words: map[string]int64{"w1": 3, "w2": 5, "w3": 1}})
	r.jobs = append(r.jobs, j)
	verifyNow(t, r, load)
	wantKept(t, r)

	put("part-r-00001", "w3\t2\n")
	verifyNow(t, r, load)
	if len(r.rep.Lost) != 1 || !strings.Contains(r.rep.Lost[0].What, `word "w3" counted 2`) || len(r.rep.Lost[0].History) == 0 {
		t.Fatalf("changed count: lost = %v", r.rep.Lost)
	}
	r.rep.Lost = nil
	if err := behind.Delete(ctx, out, true); err != nil {
		t.Fatal(err)
	}
	verifyNow(t, r, load)
	if len(r.rep.Lost) != 1 || !strings.Contains(r.rep.Lost[0].What, out) || !strings.Contains(r.rep.Lost[0].What, "gone") {
		t.Fatalf("deleted output: lost = %v", r.rep.Lost)
	}
	if h := r.rep.Lost[0].History; len(h) != 1 || h[0].Op != "job" {
		t.Fatalf("job loss history = %v", h)
	}
}

// notApplied is what separates "in doubt" from "did not happen": only a
// refusal before the request left, or safe mode, counts as not applied.
func TestNotApplied(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{status.Error(codes.Unavailable, "dial tcp 127.0.0.1:9: connect: connection refused"), true},
		{&client.PathError{Op: "rm", Path: "/x", Kind: client.ErrUnavailable, Msg: "Name node is in safe mode. blocks reported"}, true},
		{status.Error(codes.Unavailable, "error reading from server: EOF"), false},
		{context.DeadlineExceeded, false},
		{fmt.Errorf("rm /x: %w", errors.New("connection reset by peer")), false},
	} {
		if got := notApplied(c.err); got != c.want {
			t.Errorf("notApplied(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

// A failed op's error is kept (the first MaxOpErrors of each kind) and
// printed under the counts: a count of failed gets alone cannot say
// whether they met a failover or a full disk.
func TestFailedOpsKeepTheirFirstErrors(t *testing.T) {
	r := &run{rep: &Report{Ops: map[string]*OpCount{}}}
	r.count("get", nil)
	for i := 0; i < MaxOpErrors+3; i++ {
		r.count("get", fmt.Errorf("read /f%d: all namenodes refused", i))
	}
	c := r.rep.Ops["get"]
	if c.OK != 1 || c.Failed != MaxOpErrors+3 || len(c.Errors) != MaxOpErrors {
		t.Fatalf("get count %+v: want 1 ok, %d failed, %d errors kept", c, MaxOpErrors+3, MaxOpErrors)
	}
	var b strings.Builder
	r.rep.Print(&b)
	if !strings.Contains(b.String(), "first failed get ops (of 11):") || !strings.Contains(b.String(), "read /f0: all namenodes refused") {
		t.Fatalf("report does not show the errors:\n%s", b.String())
	}
}
