package apps

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"

	"smarth/internal/mapreduce"
)

// Streaming runs any executable as mapper, combiner and reducer, as Hadoop
// Streaming does: a task starts the command (through /bin/sh -c) and feeds
// it lines on stdin — the input line for a mapper, "key\tvalue" for a
// reducer, in key order — and every line the command prints is a record,
// split at its first tab into key and value (no tab: the whole line is the
// key). Without --reducer (or with --reducer NONE) the job is map-only.
// A line "reporter:counter:GROUP,NAME,AMOUNT" on stderr adds to a counter;
// other stderr lines are kept and shown if the command fails. A non-zero
// exit fails the task.
//
// The combiner runs in the map task: mapper output is buffered (up to
// streamCombineBytes), sorted by key and piped through the combiner
// command, whose output goes to the shuffle.
type Streaming struct{}

var _ mapreduce.App = Streaming{}

// streamCombineBytes bounds the mapper output a map task holds before
// running the combiner over it.
const streamCombineBytes = 32 << 20

func (Streaming) Name() string { return "streaming" }
func (Streaming) Description() string {
	return "run executables as mapper/combiner/reducer over stdin/stdout lines (Hadoop Streaming)"
}

func (Streaming) Params() []mapreduce.Param {
	return []mapreduce.Param{inputParam, outputParam, reducesParam(1),
		{Name: "mapper", Help: "mapper command (run with /bin/sh -c)"},
		{Name: "reducer", Help: "reducer command; empty or NONE: map-only"},
		{Name: "combiner", Help: "combiner command (optional)"},
		{Name: mapreduce.ParamMemoryMB, Default: strconv.Itoa(mapreduce.DefaultTaskMemoryMB),
			Help: "memory limit of each task's commands, MiB (mapreduce.map.memory.mb); over it they are killed"},
		{Name: mapreduce.ParamVCores, Default: strconv.Itoa(mapreduce.DefaultTaskVCores),
			Help: "CPU share of each task's commands, in cores (mapreduce.map.cpu.vcores)"},
	}
}

func (s Streaming) Build(given map[string]string) (*mapreduce.Job, error) {
	p := withDefaults(s.Params(), given)
	mapper, err := p.required("mapper")
	if err != nil {
		return nil, err
	}
	if _, err := p.int(mapreduce.ParamMemoryMB, 1, 1<<20); err != nil {
		return nil, err
	}
	if _, err := p.int(mapreduce.ParamVCores, 1, 1024); err != nil {
		return nil, err
	}
	reducer, combiner := p.str("reducer"), p.str("combiner")
	mapOnly := reducer == "" || reducer == "NONE"
	if mapOnly {
		p[ParamReduces] = "0"
	}
	job, err := newJob(s.Name(), p, true, -1)
	if err != nil {
		return nil, err
	}
	if !mapOnly {
		n, err := p.int(ParamReduces, 0, 100000)
		if err != nil {
			return nil, err
		}
		job.NumReduces = int(n)
	}
	if job.NumReduces > 0 {
		job.NewReducer = func() mapreduce.Reducer { return &streamReducer{cmd: reducer} }
	} else {
		combiner = "" // nothing to combine for
	}
	job.NewMapper = func() mapreduce.Mapper { return &streamMapper{cmd: mapper, combiner: combiner} }
	return job, nil
}

// streamMapper pipes input lines through the mapper command.
//
// With a combiner it is a CombiningMapper: the mapper command's lines are
// what map() produced, the combiner's what reaches the sort.
type streamMapper struct {
	cmd, combiner string
	proc          *streamProc
	comb          *combineBuffer
}

func (m *streamMapper) Setup(ctx mapreduce.TaskContext) error {
	var emit func(k, v []byte) error
	if m.combiner != "" {
		m.comb = &combineBuffer{}
		emit = m.comb.add
	}
	var err error
	m.proc, err = startStream(ctx, "mapper", m.cmd, emit)
	return err
}

func (m *streamMapper) Map(_ mapreduce.TaskContext, _, line []byte, out mapreduce.Emitter) error {
	m.proc.out = out
	if err := m.proc.writeLine(line, nil); err != nil {
		m.proc.abort()
		return err
	}
	if m.comb != nil && m.comb.size >= streamCombineBytes {
		if err := m.comb.run(m.proc.ctx, m.combiner, out); err != nil {
			m.proc.abort()
			return err
		}
	}
	return nil
}

var _ mapreduce.CombiningMapper = (*streamMapper)(nil)

func (m *streamMapper) Combined() mapreduce.CombineStats {
	if m.comb == nil {
		return mapreduce.CombineStats{}
	}
	return m.comb.stats
}

func (m *streamMapper) Cleanup(ctx mapreduce.TaskContext, out mapreduce.Emitter) error {
	m.proc.out = out
	if err := m.proc.finish(); err != nil {
		return err
	}
	if m.comb != nil {
		return m.comb.run(ctx, m.combiner, out)
	}
	return nil
}

// streamReducer pipes "key\tvalue" lines through the reducer command.
type streamReducer struct {
	cmd  string
	proc *streamProc
}

func (r *streamReducer) Setup(ctx mapreduce.TaskContext) error {
	var err error
	r.proc, err = startStream(ctx, "reducer", r.cmd, nil)
	return err
}

func (r *streamReducer) Reduce(_ mapreduce.TaskContext, key []byte, values mapreduce.ValueIterator, out mapreduce.Emitter) error {
	r.proc.out = out
	for values.Next() {
		if err := r.proc.writeLine(key, values.Value()); err != nil {
			r.proc.abort()
			return err
		}
	}
	return nil
}

func (r *streamReducer) Cleanup(_ mapreduce.TaskContext, out mapreduce.Emitter) error {
	r.proc.out = out
	return r.proc.finish()
}

// combineBuffer holds mapper output until it is sorted and combined.
type combineBuffer struct {
	arena []byte
	recs  [][4]int // key start, key end, value end (value starts at key end)
	size  int
	// stats count records and bytes into and out of the combiner.
	stats mapreduce.CombineStats
}

func (c *combineBuffer) add(k, v []byte) error {
	c.stats.InRecords++
	c.stats.InBytes += int64(len(k) + len(v))
	start := len(c.arena)
	c.arena = append(append(c.arena, k...), v...)
	c.recs = append(c.recs, [4]int{start, start + len(k), len(c.arena)})
	c.size += len(k) + len(v) + 32
	return nil
}

// run sorts the buffered records by key (stable: values keep their order)
// and pipes them through the combiner command into out.
func (c *combineBuffer) run(ctx context.Context, cmd string, out mapreduce.Emitter) error {
	if len(c.recs) == 0 {
		return nil
	}
	slices.SortStableFunc(c.recs, func(a, b [4]int) int {
		return bytes.Compare(c.arena[a[0]:a[1]], c.arena[b[0]:b[1]])
	})
	p, err := startStream(ctx, "combiner", cmd, func(k, v []byte) error {
		c.stats.OutRecords++
		c.stats.OutBytes += int64(len(k) + len(v))
		return out.Emit(k, v)
	})
	if err != nil {
		return err
	}
	for _, r := range c.recs {
		if err := p.writeLine(c.arena[r[0]:r[1]], c.arena[r[1]:r[2]]); err != nil {
			p.abort()
			return err
		}
	}
	c.arena, c.recs, c.size = c.arena[:0], c.recs[:0], 0
	return p.finish()
}

// streamProc is one running command. Input lines are batched and handed
// to a writer goroutine; a reader goroutine turns stdout into batches of
// whole lines. Only the task's goroutine emits records: while it waits to
// hand over input it also takes output, so a command that writes a lot
// before reading more cannot deadlock the pipe.
type streamProc struct {
	ctx     context.Context
	role    string
	cmdl    string
	cmd     *exec.Cmd
	emit    func(k, v []byte) error // nil: out.Emit
	out     mapreduce.Emitter
	batch   []byte
	in      chan []byte // full input batches for the writer; closed by finish
	outCh   chan []byte // stdout batches; closed at EOF
	done    chan struct{}
	wrErr   error // set by the writer before it closes done
	errs    *stderrLog
	aborted bool
}

const streamBatch = 64 << 10

func startStream(ctx context.Context, role, cmdline string, emit func(k, v []byte) error) (*streamProc, error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", cmdline)
	ownProcessGroup(cmd)
	var env []string // the task's variables, on top of what the container gives
	if tc, ok := ctx.(mapreduce.TaskContext); ok {
		env = append(env, "SMARTH_TASK_INDEX="+strconv.Itoa(tc.TaskIndex()))
	}
	starter := mapreduce.TaskCommands(ctx)
	if starter != nil {
		if err := starter.Ready(); err != nil {
			return nil, fmt.Errorf("streaming %s %q: %w", role, cmdline, err)
		}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	// A killed task stops reading at once, even when a child that left
	// the process group (setsid, a daemon) still holds the pipes open.
	cmd.Cancel = func() error {
		err := killGroup(cmd)
		stdout.Close()
		stderr.Close()
		return err
	}
	// On a node manager the command runs in the attempt's container (its
	// user, environment, work directory and cgroup); run locally, as this
	// process with its environment.
	if starter != nil {
		err = starter.Start(cmd, env)
	} else {
		cmd.Env = append(os.Environ(), env...)
		err = cmd.Start()
	}
	if err != nil {
		stdin.Close()
		stdout.Close()
		stderr.Close()
		return nil, fmt.Errorf("streaming %s %q: %w", role, cmdline, err)
	}
	p := &streamProc{ctx: ctx, role: role, cmdl: cmdline, cmd: cmd, emit: emit,
		in: make(chan []byte, 2), outCh: make(chan []byte, 4), done: make(chan struct{}), errs: &stderrLog{done: make(chan struct{})}}
	go p.writer(stdin)
	go p.reader(stdout)
	p.errs.keep = mapreduce.TaskStderr(ctx) // the attempt's stderr log on the node manager
	go p.errs.read(stderr)
	return p, nil
}

func (p *streamProc) writer(stdin io.WriteCloser) {
	defer close(p.done)
	for b := range p.in {
		if p.wrErr == nil {
			if _, err := stdin.Write(b); err != nil {
				p.wrErr = err // keep draining so the task never blocks on in
			}
		}
	}
	if err := stdin.Close(); p.wrErr == nil {
		p.wrErr = err
	}
}

func (p *streamProc) reader(stdout io.Reader) {
	defer close(p.outCh)
	br := bufio.NewReaderSize(stdout, streamBatch)
	batch := make([]byte, 0, streamBatch)
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: collect it whole.
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(line) > 0 {
			if len(batch)+len(line) >= cap(batch) && len(batch) > 0 {
				p.outCh <- batch
				batch = make([]byte, 0, max(streamBatch, len(line)+1))
			}
			batch = append(batch, line...)
			if line[len(line)-1] != '\n' {
				batch = append(batch, '\n') // a last line without newline
			}
		}
		if err != nil {
			if len(batch) > 0 {
				p.outCh <- batch
			}
			return
		}
		if br.Buffered() == 0 && len(batch) > 0 {
			// Nothing more ready: hand over what we have.
			p.outCh <- batch
			batch = make([]byte, 0, streamBatch)
		}
	}
}

// writeLine queues "a\tb\n" (or "a\n" when b is nil).
func (p *streamProc) writeLine(a, b []byte) error {
	p.batch = append(p.batch, a...)
	if b != nil {
		p.batch = append(append(p.batch, '\t'), b...)
	}
	p.batch = append(p.batch, '\n')
	if len(p.batch) >= streamBatch {
		return p.flush()
	}
	return nil
}

// flush hands the current batch to the writer, emitting output meanwhile.
func (p *streamProc) flush() error {
	if len(p.batch) == 0 {
		return nil
	}
	for {
		select {
		case p.in <- p.batch:
			p.batch = make([]byte, 0, streamBatch)
			return nil
		case b, ok := <-p.outCh:
			if !ok {
				// The command closed stdout while we still have input:
				// let the writer discard it; finish reports the exit.
				p.outCh = nil
				continue
			}
			if err := p.emitLines(b); err != nil {
				return err
			}
		case <-p.ctx.Done():
			return p.ctx.Err()
		}
	}
}

func (p *streamProc) emitLines(b []byte) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		line := b[:i]
		b = b[i+1:]
		k, v := mapreduce.SplitKeyValue(line)
		var err error
		if p.emit != nil {
			err = p.emit(k, v)
		} else {
			err = p.out.Emit(k, v)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// finish sends the rest of the input, closes stdin, emits all output and
// waits for the command.
func (p *streamProc) finish() error {
	if p.aborted {
		return fmt.Errorf("streaming %s %q: aborted", p.role, p.cmdl)
	}
	err := p.flush()
	close(p.in)
	if p.outCh != nil {
		for b := range p.outCh {
			if err == nil {
				err = p.emitLines(b)
			}
		}
	}
	<-p.done
	<-p.errs.done
	werr := p.cmd.Wait()
	mapreduce.BookProcess(p.ctx, p.cmd.ProcessState)
	// What the command left running in the background goes with the task,
	// as Hadoop kills a task's whole process tree.
	killGroup(p.cmd)
	if tc, ok := p.ctx.(mapreduce.TaskContext); ok {
		for k, n := range p.errs.counters {
			tc.Count(k[0], k[1], n)
		}
	}
	if werr != nil {
		return fmt.Errorf("streaming %s %q: %v%s", p.role, p.cmdl, werr, p.errs.tail())
	}
	if err != nil {
		return err
	}
	// A broken pipe with a clean exit means the command chose to stop
	// reading (like head); that is its business.
	if p.wrErr != nil && !errors.Is(p.wrErr, os.ErrClosed) && !strings.Contains(p.wrErr.Error(), "broken pipe") {
		return fmt.Errorf("streaming %s %q: write input: %v", p.role, p.cmdl, p.wrErr)
	}
	return nil
}

// abort kills the command after a failed Map or Reduce (the runtime calls
// no Cleanup then) and reaps it in the background.
func (p *streamProc) abort() {
	if p.aborted {
		return
	}
	p.aborted = true
	p.cmd.Cancel() // the whole process group, and our ends of its pipes
	close(p.in)
	go func() {
		if p.outCh != nil {
			for range p.outCh {
			}
		}
		<-p.done
		<-p.errs.done
		p.cmd.Wait()
	}()
}

// stderrLog reads a command's stderr: counter lines are summed, the last
// lines kept for error messages.
type stderrLog struct {
	keep     io.Writer // every line, as the command wrote it
	lines    []string
	counters map[[2]string]int64
	done     chan struct{} // closed when stderr is read to the end
}

const stderrKeep = 20

func (s *stderrLog) read(r io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if s.keep != nil {
			fmt.Fprintln(s.keep, line)
		}
		if rest, ok := strings.CutPrefix(line, "reporter:counter:"); ok {
			parts := strings.SplitN(rest, ",", 3)
			if len(parts) == 3 {
				if n, err := strconv.ParseInt(strings.TrimSpace(parts[2]), 10, 64); err == nil {
					if s.counters == nil {
						s.counters = map[[2]string]int64{}
					}
					s.counters[[2]string{parts[0], parts[1]}] += n
					continue
				}
			}
		}
		if strings.HasPrefix(line, "reporter:status:") {
			continue
		}
		s.lines = append(s.lines, line)
		if len(s.lines) > stderrKeep {
			s.lines = s.lines[1:]
		}
	}
}

// tail is the kept stderr, for an error message (read after done).
func (s *stderrLog) tail() string {
	if len(s.lines) == 0 {
		return ""
	}
	return "; stderr:\n  " + strings.Join(s.lines, "\n  ")
}
