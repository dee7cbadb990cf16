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
	fsys, err := r.newClient(mode)
	if err != nil {
		r.warn("worker %d: %v", w, err)
		return
	}
	defer fsys.Close()
	for ctx.Err() == nil {
		var ok bool
		switch n := rng.IntN(3); {
		case n == 0 && r.numFiles() >= r.o.MaxFiles:
			ok = r.delete(ctx, rng, fsys) // keeps the data bounded; puts come back below the cap
		case n == 0 || r.numFiles() < 4:
			ok = r.put(ctx, rng, fsys)
		case n == 1:
			ok = r.get(ctx, rng, fsys)
		default:
			ok = r.rename(ctx, rng, fsys)
		}
		if !ok {
			// A daemon is down: back off as a real client would
			// instead of counting thousands of instant failures.
			sleepCtx(ctx, 250*time.Millisecond)
		}
	}
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
		r.count("put", false)
		return false
	}
	r.count("put", true)
	r.mu.Lock()
	r.files[id] = &ackedFile{id: id, path: p, size: size, sum: sha256.Sum256(data)}
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
// whose name is certain; checkin returns it.
func (r *run) checkout(rng *rand.Rand) *ackedFile {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []int
	for id, f := range r.files {
		if !r.busy[id] && f.alt == "" && !f.mayBeGone {
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

// get reads an acknowledged file whole. A read that fails is a failed op;
// one that returns other bytes is a lost acknowledged put.
func (r *run) get(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	f := r.checkout(rng)
	if f == nil {
		return r.put(ctx, rng, fsys)
	}
	defer r.checkin(f)
	err := r.readCheck(ctx, fsys, f.path, f.size, f.sum)
	r.count("get", err == nil)
	if err == errWrongContent {
		r.lost("get %s served bytes other than the acknowledged put's", f.path)
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

// rename moves an acknowledged file to a new name. An error leaves its
// name uncertain (the namenode may have renamed it and died before
// answering): verification then accepts either name.
func (r *run) rename(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	f := r.checkout(rng)
	if f == nil {
		return r.put(ctx, rng, fsys)
	}
	defer r.checkin(f)
	dst := path.Join(r.o.Dir, fmt.Sprintf("renamed%d", rng.IntN(4)), fmt.Sprintf("f%06d-r%d", f.id, r.newID()))
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	if err := fsys.Mkdir(octx, path.Dir(dst), 0o755, true); err != nil {
		r.count("rename", false)
		return false
	}
	err := fsys.Rename(octx, f.path, dst)
	r.count("rename", err == nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		f.path = dst
	} else {
		f.alt = dst
	}
	return err == nil
}

// delete removes an acknowledged file. Acknowledged, the file must stay
// gone; failed, it may be gone or whole.
func (r *run) delete(ctx context.Context, rng *rand.Rand, fsys *client.FileSystem) bool {
	f := r.checkout(rng)
	if f == nil {
		return false
	}
	defer r.checkin(f)
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	err := fsys.Delete(octx, f.path, false)
	r.count("delete", err == nil)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		delete(r.files, f.id)
		r.deleted = append(r.deleted, f.path)
	} else {
		f.mayBeGone = true
	}
	return err == nil
}

// ackedJob is a job that SUCCEEDED and what its output must hold.
type ackedJob struct {
	id, app, output string
	dir             string           // the job's directory (input and output), deleted once verified
	words           map[string]int64 // wordcount: exact counts
	rows            int64            // teragen
	checksum        int64            // teragen: the job's CHECKSUM counter
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
	for i := 0; ctx.Err() == nil; i++ {
		dir := path.Join(r.o.Dir, "jobs", fmt.Sprintf("j%04d", i))
		var ok bool
		if i%2 == 0 {
			ok = r.wordcount(ctx, rng, fsys, jc, dir)
		} else {
			ok = r.teragen(ctx, rng, fsys, jc, dir)
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
		r.count("job-input", false)
		return false
	}
	r.count("job-input", true)
	out := path.Join(dir, "out")
	res, err := r.runJob(ctx, jc, "wordcount", map[string]string{apps.ParamInput: path.Dir(in), apps.ParamOutput: out, apps.ParamReduces: "2"})
	if err != nil {
		return false
	}
	r.addJob(ctx, fsys, &ackedJob{id: res.JobID, app: "wordcount", output: out, words: words, dir: dir})
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
	if t[apps.CounterRows] != rows {
		r.lost("job %s (teragen --rows %d) SUCCEEDED reporting %d rows written", res.JobID, rows, t[apps.CounterRows])
	}
	r.addJob(ctx, fsys, &ackedJob{id: res.JobID, app: "teragen", output: out, rows: rows, checksum: t[apps.CounterChecksum], dir: dir})
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
		r.lost("job %s (%s) output %s: %s", old.id, old.app, old.output, what)
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
	r.count("job-"+app, err == nil)
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

// verify checks every promise, retrying reads that fail (a restarted
// datanode's replicas may still be coming back) until ctx ends; content
// that is wrong is lost at once.
func (r *run) verify(ctx context.Context, fsys *client.FileSystem) {
	r.mu.Lock()
	files := make([]*ackedFile, 0, len(r.files))
	for _, f := range r.files {
		files = append(files, f)
	}
	jobs := slices.Clone(r.jobs)
	deleted := slices.Clone(r.deleted)
	early := r.verified
	r.mu.Unlock()
	slices.SortFunc(files, func(a, b *ackedFile) int { return a.id - b.id })
	r.rep.Acked = len(files) + len(jobs) + len(deleted) + early + r.renamesAcked()
	for _, p := range deleted {
		if _, err := r.statUntil(ctx, fsys, p); err == nil {
			r.lost("%s: acknowledged delete, the file is back", p)
		}
	}
	r.logf("verifying %d acknowledged files and %d succeeded jobs", len(files), len(jobs))

	pending := files
	for round := 0; len(pending) > 0; round++ {
		var again []*ackedFile
		var lastErr error
		for _, f := range pending {
			err := r.checkFile(ctx, fsys, f)
			switch {
			case err == errWrongContent:
				r.lost("%s (acknowledged put of %d bytes): content differs", f.path, f.size)
			case err != nil:
				again, lastErr = append(again, f), err
			}
		}
		pending = again
		if len(pending) == 0 {
			break
		}
		if ctx.Err() != nil {
			for _, f := range pending {
				r.lost("%s (acknowledged put of %d bytes): not readable: %v", f.path, f.size, lastErr)
			}
			break
		}
		if round == 0 {
			r.logf("%d files not readable yet (%v); retrying", len(pending), lastErr)
		}
		time.Sleep(time.Second) // replicas coming back: a retry, bounded by ctx
	}
	for _, j := range jobs {
		for {
			what, err := checkJob(ctx, fsys, j)
			if err == nil {
				break
			}
			if err == errWrongContent {
				r.lost("job %s (%s) output %s: %s", j.id, j.app, j.output, what)
				break
			}
			if ctx.Err() != nil {
				r.lost("job %s (%s) output %s: not readable: %v", j.id, j.app, j.output, err)
				break
			}
			time.Sleep(time.Second) // as above
		}
	}
}

// checkFile checks one acknowledged file under its name, or under either
// name after a rename without a verdict.
func (r *run) checkFile(ctx context.Context, fsys *client.FileSystem, f *ackedFile) error {
	if f.mayBeGone {
		if _, err := r.statUntil(ctx, fsys, f.path); errors.Is(err, fs.ErrNotExist) {
			return nil // the delete that failed happened after all
		}
	}
	err := r.readCheck(ctx, fsys, f.path, f.size, f.sum)
	if err == nil || f.alt == "" || err == errWrongContent {
		return err
	}
	if err2 := r.readCheck(ctx, fsys, f.alt, f.size, f.sum); err2 == nil || err2 == errWrongContent {
		return err2
	}
	return err
}

// statUntil stats p, retrying errors other than "does not exist" until
// ctx ends (the namenode may still be starting).
func (r *run) statUntil(ctx context.Context, fsys *client.FileSystem, p string) (client.FileInfo, error) {
	for {
		fi, err := fsys.Stat(ctx, p)
		if err == nil || errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
			return fi, err
		}
		sleepCtx(ctx, time.Second)
	}
}

func (r *run) renamesAcked() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.rep.Ops["rename"]; c != nil {
		return c.OK
	}
	return 0
}
