package chaos

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"smarth/internal/client"
	"smarth/internal/mapreduce"
	"smarth/internal/mapreduce/apps"
	"smarth/internal/mapreduce/jobclient"
)

// opTimeout bounds one load operation: long enough to ride out a
// namenode restart, short enough that a stuck one shows as failed.
const opTimeout = 2 * time.Minute

// fileWorker puts, gets and renames files until ctx ends: half puts until
// a few files exist, then a third each.
func (r *run) fileWorker(ctx context.Context, w int, mode string) {
	rng := rand.New(rand.NewPCG(r.o.Seed, uint64(100+w)))
	fsys, err := r.newClientWith(mode, r.o.ObserverReads && w > 0)
	if err != nil {
		r.warn("worker %d: %v", w, err)
		return
	}
	defer fsys.Close()
	defer func() {
		served, toActive := fsys.ObserverReads()
		r.mu.Lock()
		r.rep.ObserverServed += served
		r.rep.ObserverToActive += toActive
		r.mu.Unlock()
	}()
	octx := r.opContext(ctx)
	for ctx.Err() == nil {
		var ok bool
		switch n := rng.IntN(3); {
		case n == 0 && r.numFiles() >= r.o.MaxFiles:
			ok = r.delete(octx, rng, fsys) // keeps the data bounded; puts come back below the cap
		case n == 0 || r.numFiles() < 4:
			ok = r.put(octx, rng, fsys)
		case n == 1:
			ok = r.get(octx, rng, fsys)
		default:
			ok = r.rename(octx, rng, fsys)
		}
		if !ok {
			// A daemon is down: back off as a real client would
			// instead of counting thousands of instant failures.
			sleepCtx(ctx, 250*time.Millisecond)
		}
	}
}

// opContext is the context of the load's operations: the run's, not the
// load phase's, so an operation in flight when the load ends finishes
// with a verdict instead of being cut off into doubt (a delete cancelled
// mid-call may or may not have happened). Abandoning the run still
// cancels it.
func (r *run) opContext(load context.Context) context.Context {
	if r.runCtx != nil {
		return r.runCtx
	}
	return load
}

func (r *run) numFiles() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.files)
}

// put writes a new file of random size and content; a close that returns
// nil is the acknowledgement.
func (r *run) put(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	id := r.newID()
	size := rng.Int64N(r.o.MaxFileSize + 1)
	if rng.IntN(8) == 0 {
		size = 0 // empty files are files too
	}
	data := make([]byte, size)
	fillRandom(rng, data)
	p := path.Join(r.o.Dir, "files", fmt.Sprintf("f%06d", id))
	if err := writeFile(ctx, fsys, p, data); err != nil {
		r.count("put", err)
		return false
	}
	r.count("put", nil)
	f := &ackedFile{id: id, path: p, size: size, sum: sha256.Sum256(data), by: fsys}
	f.hist.add("put", fmt.Sprintf("%s (%d bytes)", p, size), nil)
	r.mu.Lock()
	r.files[id] = f
	r.mu.Unlock()
	return true
}

// sleepCtx pauses for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func fillRandom(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
}

// writeFile creates p with data; on failure it aborts the writer (best
// effort: the namenode may be down) so the file does not wait for its
// lease to expire.
func writeFile(ctx context.Context, fsys *client.FileSystem, p string, data []byte) error {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	w, err := fsys.Create(octx, p, client.CreateOptions{})
	if err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		w.Abort()
		return err
	}
	return nil
}

// checkout takes a random acknowledged file that no other worker uses and
// whose name is certain, not a failover probe's if the worker is to
// rename or delete it (mutate); checkin returns it.
func (r *run) checkout(rng *rand.Rand, mutate bool) *ackedFile {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []int
	for id, f := range r.files {
		if !r.busy[id] && f.alt == "" && !f.delInDoubt && !(mutate && f.probe) {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids) // map order is random; the seed should decide
	f := r.files[ids[rng.IntN(len(ids))]]
	r.busy[f.id] = true
	return f
}

func (r *run) checkin(f *ackedFile) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.busy, f.id)
}

// gone reports f lost at once: no one else touches a worker's file, so
// "does not exist" under its certain name is never a race. It leaves the
// file's record so it is not reported again.
func (r *run) gone(f *ackedFile, op string, err error) {
	r.lost(&f.hist, "%s (acknowledged put of %d bytes): %s found it gone: %v", f.path, f.size, op, err)
	r.mu.Lock()
	delete(r.files, f.id)
	r.mu.Unlock()
}

func (r *run) get(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	f := r.checkout(rng, false)
	if f == nil {
		return r.put(ctx, rng, fsys)
	}
	defer r.checkin(f)
	return r.getFile(ctx, fsys, f)
}

// getFile reads an acknowledged file whole. A read that fails is a failed
// op; one that finds no file, or returns other bytes, is a lost
// acknowledged put.
func (r *run) getFile(ctx context.Context, fsys *client.FileSystem, f *ackedFile) bool {
	var err error
	r.mu.Lock()
	handed := f.by != fsys
	r.mu.Unlock()
	if handed {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		err = fsys.Msync(octx)
		cancel()
	}
	if err == nil {
		err = r.readCheck(ctx, fsys, f.path, f.size, f.sum)
	}
	r.count("get", err)
	f.hist.add("get", f.path, err)
	switch {
	case err == errWrongContent:
		r.lost(&f.hist, "get %s served bytes other than the acknowledged put's", f.path)
	case errors.Is(err, fs.ErrNotExist):
		r.gone(f, "get", err)
	}
	return err == nil
}

// readCheck reads p and compares it with the acknowledged size and digest.
func (r *run) readCheck(ctx context.Context, fsys *client.FileSystem, p string, size int64, sum [32]byte) error {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	rd, err := fsys.Open(octx, p)
	if err != nil {
		return err
	}
	defer rd.Close()
	h := sha256.New()
	n, err := io.Copy(h, rd)
	if err != nil {
		return err
	}
	if n != size || !bytes.Equal(h.Sum(nil), sum[:]) {
		return errWrongContent
	}
	return nil
}

func (r *run) rename(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	f := r.checkout(rng, true)
	if f == nil {
		return r.put(ctx, rng, fsys)
	}
	defer r.checkin(f)
	dst := path.Join(r.o.Dir, fmt.Sprintf("renamed%d", rng.IntN(4)), fmt.Sprintf("f%06d-r%d", f.id, r.newID()))
	return r.renameFile(ctx, fsys, f, dst)
}

// renameFile moves an acknowledged file to dst, a name never used before.
// Acknowledged, the file must be whole under dst and its old name absent.
// A source that does not exist is a loss. A failure that may have been
// applied (the namenode renamed it and died before answering) leaves its
// name uncertain: verification then accepts either name, but not both.
func (r *run) renameFile(ctx context.Context, fsys *client.FileSystem, f *ackedFile, dst string) bool {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := fsys.Mkdir(octx, path.Dir(dst), 0o755, true); err != nil {
		r.count("rename", err)
		return false
	}
	err := fsys.Rename(octx, f.path, dst)
	r.count("rename", err)
	f.hist.add("rename", f.path+" -> "+dst, err)
	switch {
	case err == nil:
		r.mu.Lock()
		f.old = append(f.old, f.path)
		f.path, f.by = dst, fsys
		r.mu.Unlock()
	case errors.Is(err, fs.ErrNotExist):
		r.gone(f, "rename", err)
	case !notApplied(err):
		r.mu.Lock()
		f.alt = dst
		r.mu.Unlock()
	}
	return err == nil
}

func (r *run) delete(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	f := r.checkout(rng, true)
	if f == nil {
		return false
	}
	defer r.checkin(f)
	return r.deleteFile(ctx, fsys, f)
}

// deleteFile removes an acknowledged file. Acknowledged, the file must
// stay gone. "Does not exist" is a loss (the file was there, and no one
// else touches it). A failure that may have been applied leaves the file
// in doubt: whole or gone, and gone cannot then be told from lost.
func (r *run) deleteFile(ctx context.Context, fsys *client.FileSystem, f *ackedFile) bool {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := fsys.Delete(octx, f.path, false)
	r.count("delete", err)
	r.recordDelete(f, err)
	return err == nil
}

func (r *run) recordDelete(f *ackedFile, err error) {
	f.hist.add("delete", f.path, err)
	switch {
	case err == nil:
		r.mu.Lock()
		delete(r.files, f.id)
		r.deleted = append(r.deleted, f)
		r.mu.Unlock()
	case errors.Is(err, fs.ErrNotExist):
		r.gone(f, "delete", err)
	case !notApplied(err):
		r.mu.Lock()
		f.delInDoubt = true
		r.mu.Unlock()
	}
}

// ackedJob is a job that SUCCEEDED and what its output must hold.
type ackedJob struct {
	id, app, output string
	dir             string           // the job's directory (input and output), deleted once verified
	words           map[string]int64 // wordcount: exact counts
	rows            int64            // teragen
	checksum        int64            // teragen: the job's CHECKSUM counter
	hist            history
}

// newJob records a job that SUCCEEDED.
func newJob(j *ackedJob) *ackedJob {
	j.hist.add("job", fmt.Sprintf("%s %s SUCCEEDED, output %s", j.app, j.id, j.output), nil)
	return j
}

// jobWorker runs small jobs one after another, wordcount and teragen in
// turn, through the resource manager.
func (r *run) jobWorker(ctx context.Context) {
	rng := rand.New(rand.NewPCG(r.o.Seed, 7))
	fsys, err := r.newClient("")
	if err != nil {
		r.warn("job worker: %v", err)
		return
	}
	defer fsys.Close()
	reg := mapreduce.NewRegistry(apps.All()...)
	sec, err := r.security()
	if err != nil {
		r.warn("job worker: %v", err)
		return
	}
	jc, err := jobclient.New(jobclient.Config{ResourceManager: r.st.ResourceManager, FS: mapreduce.DFS(fsys), Registry: reg,
		TokenFile: sec.TokenFile, TLS: sec.TLS, PollInterval: 500 * time.Millisecond})
	if err != nil {
		r.warn("job worker: %v", err)
		return
	}
	defer jc.Close()
	octx := r.opContext(ctx)
	for i := 0; ctx.Err() == nil; i++ {
		dir := path.Join(r.o.Dir, "jobs", fmt.Sprintf("j%04d", i))
		var ok bool
		if i%2 == 0 {
			ok = r.wordcount(octx, rng, fsys, jc, dir)
		} else {
			ok = r.teragen(octx, rng, fsys, jc, dir)
		}
		if !ok {
			sleepCtx(ctx, time.Second) // as the file workers' back-off
		}
	}
}

// jobTimeout bounds one job: they are small, but a killed node manager
// costs its tasks a retry.
const jobTimeout = 4 * time.Minute

func (r *run) wordcount(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem, jc *jobclient.Client, dir string) bool {
	words := map[string]int64{}
	var text bytes.Buffer
	for range 2000 + rng.IntN(4000) {
		for k := range 1 + rng.IntN(12) {
			w := fmt.Sprintf("w%d", rng.IntN(60))
			if k > 0 {
				text.WriteByte(' ')
			}
			text.WriteString(w)
			words[w]++
		}
		text.WriteByte('\n')
	}
	in := path.Join(dir, "in", "text.txt")
	if err := writeFile(ctx, fsys, in, text.Bytes()); err != nil {
		r.count("job-input", err)
		return false
	}
	r.count("job-input", nil)
	out := path.Join(dir, "out")
	res, err := r.runJob(ctx, jc, "wordcount", map[string]string{apps.ParamInput: path.Dir(in), apps.ParamOutput: out, apps.ParamReduces: "2"})
	if err != nil {
		return false
	}
	r.addJob(ctx, fsys, newJob(&ackedJob{id: res.JobID, app: "wordcount", output: out, words: words, dir: dir}))
	return true
}

func (r *run) teragen(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem, jc *jobclient.Client, dir string) bool {
	rows := int64(5000 + rng.IntN(20000))
	out := path.Join(dir, "tera")
	res, err := r.runJob(ctx, jc, "teragen", map[string]string{apps.ParamOutput: out, "rows": strconv.FormatInt(rows, 10), "maps": "2"})
	if err != nil {
		return false
	}
	t := res.Counters[apps.GroupTera]
	j := newJob(&ackedJob{id: res.JobID, app: "teragen", output: out, rows: rows, checksum: t[apps.CounterChecksum], dir: dir})
	if t[apps.CounterRows] != rows {
		r.lost(&j.hist, "job %s (teragen --rows %d) SUCCEEDED reporting %d rows written", res.JobID, rows, t[apps.CounterRows])
	}
	r.addJob(ctx, fsys, j)
	return true
}

// addJob records a succeeded job. Beyond KeepJobs, the oldest kept job is
// verified now and its directory deleted, so a long run's data stays
// bounded; one whose output cannot be read now stays for the end.
func (r *run) addJob(ctx context.Context, fsys *client.FileSystem, j *ackedJob) {
	r.mu.Lock()
	r.jobs = append(r.jobs, j)
	var old *ackedJob
	if len(r.jobs) > r.o.KeepJobs {
		old = r.jobs[0]
	}
	r.mu.Unlock()
	if old == nil {
		return
	}
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	what, err := checkJob(octx, fsys, old)
	switch {
	case err == errWrongContent:
		r.lost(&old.hist, "job %s (%s) output %s: %s", old.id, old.app, old.output, what)
	case errors.Is(err, fs.ErrNotExist):
		r.lost(&old.hist, "job %s (%s) output %s: gone: %v", old.id, old.app, old.output, err)
	case err != nil:
		return // not readable now (a daemon is down): it stays for the final check
	}
	r.mu.Lock()
	r.jobs = slices.DeleteFunc(r.jobs, func(x *ackedJob) bool { return x == old })
	r.verified++
	r.mu.Unlock()
	_ = fsys.Delete(octx, old.dir, true) // best effort: a failed delete only leaves data behind
}

// runJob submits and waits; only SUCCEEDED is an acknowledgement.
func (r *run) runJob(ctx context.Context, jc *jobclient.Client, app string, params map[string]string) (*mapreduce.Result, error) {
	// The job runs to its end even when the load phase ends meanwhile:
	// a job killed by the harness would count as neither.
	jctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jobTimeout)
	defer cancel()
	res, err := jc.Run(jctx, app, params)
	if err == nil && res.State != mapreduce.StateSucceeded {
		err = fmt.Errorf("job %s %s", res.JobID, res.State)
	}
	r.count("job-"+app, err)
	if err != nil {
		r.logf("%s: %v", app, err)
		return nil, err
	}
	r.logf("%s %s SUCCEEDED", app, res.JobID)
	return res, nil
}

// outputFiles lists a job's part files (not _SUCCESS or hidden files).
func outputFiles(ctx context.Context, fsys *client.FileSystem, dir string) ([]string, error) {
	ls, err := fsys.List(ctx, dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ls {
		if !e.IsDir && !strings.HasPrefix(e.Name, "_") && !strings.HasPrefix(e.Name, ".") {
			out = append(out, e.Path)
		}
	}
	slices.Sort(out)
	return out, nil
}

// checkJob reads a succeeded job's output and compares it with what the
// job promised. errWrongContent: the output is readable and wrong.
func checkJob(ctx context.Context, fsys *client.FileSystem, j *ackedJob) (string, error) {
	parts, err := outputFiles(ctx, fsys, j.output)
	if err != nil {
		return "", err
	}
	switch j.app {
	case "wordcount":
		got := map[string]int64{}
		for _, p := range parts {
			rd, err := fsys.Open(ctx, p)
			if err != nil {
				return "", err
			}
			sc := bufio.NewScanner(rd)
			for sc.Scan() {
				w, c, ok := strings.Cut(sc.Text(), "\t")
				n, err := strconv.ParseInt(c, 10, 64)
				if !ok || err != nil {
					rd.Close()
					return fmt.Sprintf("%s: line %q is not word<TAB>count", p, sc.Text()), errWrongContent
				}
				got[w] += n
			}
			err = sc.Err()
			rd.Close()
			if err != nil {
				return "", err
			}
		}
		for w, n := range j.words {
			if got[w] != n {
				return fmt.Sprintf("word %q counted %d, input has %d", w, got[w], n), errWrongContent
			}
		}
		if len(got) != len(j.words) {
			return fmt.Sprintf("%d distinct words in the output, %d in the input", len(got), len(j.words)), errWrongContent
		}
	case "teragen":
		var rows, sum int64
		row := make([]byte, 100)
		for _, p := range parts {
			rd, err := fsys.Open(ctx, p)
			if err != nil {
				return "", err
			}
			br := bufio.NewReader(rd)
			for {
				_, err := io.ReadFull(br, row)
				if err == io.EOF {
					break
				}
				if err != nil {
					rd.Close()
					if err == io.ErrUnexpectedEOF {
						return fmt.Sprintf("%s ends in a partial row", p), errWrongContent
					}
					return "", err
				}
				rows++
				sum += int64(crc32.ChecksumIEEE(row))
			}
			rd.Close()
		}
		if rows != j.rows || sum != j.checksum {
			return fmt.Sprintf("%d rows with CRC32 sum %d; the job reported %d rows, sum %d", rows, sum, j.rows, j.checksum), errWrongContent
		}
	}
	return "", nil
}
