package mapreduce

import (
	"context"
	"io"
	"time"
)

// This file is the contract between the MapReduce runtime (resource
// manager, node managers, task execution, shuffle) and the applications
// under apps/. Applications describe *what* to compute; the runtime decides
// where and when. Add to it freely; change existing names only with care,
// since every app depends on them.

// Emitter receives the records a map or reduce function produces. Key and
// value slices may be reused by the caller after Emit returns, so an
// implementation that keeps them must copy.
type Emitter interface {
	Emit(key, value []byte) error
}

// TaskContext is what a running task may see of its job.
type TaskContext interface {
	context.Context
	// Param returns a job parameter (set by the app's flags or --param k=v).
	Param(name string) string
	// Count adds n to a job counter; counters are summed over all tasks and
	// printed when the job ends.
	Count(group, name string, n int64)
	// FS is the file system the job runs against, for side inputs (e.g.
	// KMeans centroids) — not for the main input or output.
	FS() FS
	// TaskIndex is the map or reduce index of this task (0-based).
	TaskIndex() int
}

// Mapper turns one input record into zero or more intermediate records.
type Mapper interface {
	Map(ctx TaskContext, key, value []byte, out Emitter) error
}

// Reducer folds all values of one key. It also serves as a combiner.
type Reducer interface {
	Reduce(ctx TaskContext, key []byte, values ValueIterator, out Emitter) error
}

// ValueIterator walks the values of one key in a reduce call. Value's
// slice is valid until the next call to Next, and must not be modified: it
// may be the map output itself, shared with other readers.
type ValueIterator interface {
	Next() bool
	Value() []byte
}

// Setupper and Cleaner are optional capabilities of a Mapper or Reducer,
// discovered by type assertion: Setup runs once before the first record,
// Cleanup once after the last (and may emit, e.g. in-mapper combining).
type Setupper interface {
	Setup(ctx TaskContext) error
}

// Cleaner is the optional end-of-task hook; see Setupper.
type Cleaner interface {
	Cleanup(ctx TaskContext, out Emitter) error
}

// CombiningMapper is the optional capability of a Mapper that combines
// in memory before it emits (in-mapper combining, or Streaming's combiner
// run inside the map task). Combined reports the records its map()
// produced before combining (in) and what it emitted after (out), so
// MAP_OUTPUT_RECORDS keeps Hadoop's meaning — what map() emitted, before
// any combining — and the combining shows in COMBINE_INPUT_RECORDS and
// COMBINE_OUTPUT_RECORDS as a combiner's would. MAP_OUTPUT_BYTES likewise
// counts what map() produced (key and value bytes, as the collector
// counts a record), so the stats carry bytes in and out too. Called once,
// after Cleanup.
type CombiningMapper interface {
	Combined() CombineStats
}

// CombineStats is what an in-mapper combiner took in (what map()
// produced) and emitted (what reached the collector), in records and in
// key plus value bytes.
type CombineStats struct {
	InRecords, OutRecords int64
	InBytes, OutBytes     int64
}

// Split is one map task's share of the input.
type Split struct {
	Index  int
	Path   string // empty for generated input (TeraGen, Pi, RandomTextWriter)
	Offset int64  // byte range within Path
	Length int64
	Hosts  []string // datanode hostnames holding the range, for locality
	Meta   []byte   // format-specific, e.g. the row range of a generated split
	// Racks are the racks of Hosts (added by the runtime: rack-local
	// scheduling); may be empty.
	Racks []string
	// BlockID is the DFS block the split covers, 0 when it covers none or
	// several: the resource manager asks the namenode which splits are
	// cached by it, and the map task reports its read of it (seed 003).
	BlockID uint64
	// CachedHosts hold the block in memory when the split was cut; the
	// resource manager uses them until the namenode answers for the job.
	CachedHosts []string
}

// InputFormat cuts the input into splits and reads records from a split.
type InputFormat interface {
	Splits(ctx context.Context, fs FS, job *Job) ([]Split, error)
	Open(ctx context.Context, fs FS, job *Job, split Split) (RecordReader, error)
}

// RecordReader yields the records of one split. Next returns io.EOF at the
// end. Returned slices are valid until the next call.
type RecordReader interface {
	Next() (key, value []byte, err error)
	// BytesRead is the number of input bytes consumed so far (progress and
	// counters).
	BytesRead() int64
	Close() error
}

// OutputFormat writes a reduce task's (or, with no reduces, a map task's)
// output records to one file.
type OutputFormat interface {
	Create(ctx context.Context, fs FS, job *Job, path string) (RecordWriter, error)
}

// RecordWriter writes output records; Close must flush and complete the
// file, and an error from Close fails the task.
type RecordWriter interface {
	Write(key, value []byte) error
	Close() error
}

// Partitioner chooses the reduce task of an intermediate key.
type Partitioner interface {
	Partition(key []byte, numReduces int) int
}

// Job is everything the runtime needs to run one MapReduce job. An App
// builds it from the user's parameters; the runtime fills in Input splits,
// schedules tasks, shuffles and commits Output.
type Job struct {
	Name       string
	App        string            // registered app name; tasks rebuild their Job from App + Params
	Params     map[string]string // app parameters, visible to tasks via TaskContext.Param
	Input      []string          // input paths (files or directories); empty for generated input
	Output     string            // output directory; must not exist; committed atomically
	NumReduces int               // 0 = map-only job: map output goes straight to Output

	InputFormat  InputFormat
	OutputFormat OutputFormat
	NewMapper    func() Mapper
	NewCombiner  func() Reducer // optional
	NewReducer   func() Reducer // required when NumReduces > 0
	Partitioner  Partitioner    // default: hash of the key
	// Compare orders intermediate keys; default bytes.Compare.
	Compare func(a, b []byte) int
	// OutputReplication is the replication of output files (0 = file
	// system default). TeraSort writes with 1, as Hadoop's does.
	OutputReplication int
}

// App is a registered MapReduce program. Build returns the job for the
// given parameters, validated, so a typo fails before anything runs; it
// runs both in the submitting client and in each task (so it must be
// deterministic and cheap — heavy preparation belongs in Prepare).
type App interface {
	Name() string
	Description() string
	// Params lists the parameters the app accepts, with defaults and help,
	// so the CLI can offer them as flags.
	Params() []Param
	Build(params map[string]string) (*Job, error)
}

// Preparer is an optional App capability: it runs once in the submitting
// client before the job starts (e.g. TeraSort samples its input and writes
// the partition file, whose path it records in the job's params).
type Preparer interface {
	Prepare(ctx context.Context, fs FS, job *Job) error
}

// Driver is an optional App capability for programs made of several jobs
// (KMeans, PageRank iterations, TestDFSIO's write then its analysis). When
// an App implements it, `smarth job run` calls Drive instead of submitting
// a single job.
type Driver interface {
	Drive(ctx context.Context, r Runner, params map[string]string) error
}

// Runner submits jobs and waits for them; implemented by the client of the
// resource manager and by the in-process local runner.
type Runner interface {
	Run(ctx context.Context, appName string, params map[string]string) (*Result, error)
	FS() FS
}

// Param describes one app parameter.
type Param struct {
	Name    string
	Default string
	Help    string
}

// Result is what a finished job reports.
type Result struct {
	JobID    string
	State    string // SUCCEEDED, FAILED, KILLED
	Error    string
	Elapsed  time.Duration
	Counters map[string]map[string]int64 // group -> name -> value
}

// FS is the file system a job runs against: smarth's DFS through its
// client in a cluster, or a local directory in unit tests of apps.
type FS interface {
	Create(ctx context.Context, path string, opts CreateOptions) (io.WriteCloser, error)
	Open(ctx context.Context, path string) (File, error)
	Stat(ctx context.Context, path string) (FileInfo, error)
	// List returns a directory's entries (a file lists itself).
	List(ctx context.Context, path string) ([]FileInfo, error)
	MkdirAll(ctx context.Context, path string) error
	// Mkdir creates one directory; its parent must exist and the path must
	// not (fs.ErrExist). The output committer fences stale attempts with it.
	Mkdir(ctx context.Context, path string) error
	Delete(ctx context.Context, path string, recursive bool) error
	Rename(ctx context.Context, src, dst string) error
	BlockLocations(ctx context.Context, path string, offset, length int64) ([]BlockLocation, error)
}

// CreateOptions tune a file creation.
type CreateOptions struct {
	Overwrite   bool
	Replication int // 0 = default
	// NoCreateParent fails the create when the parent directory is
	// missing instead of making it: a task attempt's output files are
	// created this way, so an attempt whose directory was removed (its job
	// aborted) cannot bring the directory back.
	NoCreateParent bool
}

// File is an open file for reading.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
	Size() int64
}

// FileInfo describes a file or directory.
type FileInfo struct {
	Path  string
	Size  int64
	IsDir bool
}

// BlockLocation is one block of a file and the hosts holding it.
type BlockLocation struct {
	Offset, Length int64
	BlockID        uint64   // 0 where the file system has no block ids (LocalFS)
	Hosts          []string // datanode hostnames
	Racks          []string
	Cached         []string // hostnames holding the block in memory
}

// CacheAccess is a map task's read of its split's block, reported so the
// DFS can cache the block where the next read will find it (seed 003: on
// the reader's node for a local read, on the serving datanode for a
// remote one).
type CacheAccess struct {
	BlockID  uint64
	App      string
	JobID    string
	Host     string  // the node the task ran on (its node manager's hostname)
	Datanode string  // ID of the datanode that served the read; "" if unknown
	Affinity float64 // the app's cache affinity in [0,1]; < 0 lets the DFS use its configured value
	// The task's reads of its input: bytes, and the time spent inside
	// the reads (the learned cache affinity's sample).
	ReadBytes int64
	ReadTime  time.Duration
	// How long the task had run when it reported (reads and map
	// function): the share of it that reads take is what memory saves.
	TaskTime time.Duration
}

// CacheReporter is an optional FS capability, discovered by type
// assertion: a file system with a block cache (the DFS) records map
// tasks' accesses. File systems without one (LocalFS) do not implement it
// and tasks report nothing.
type CacheReporter interface {
	ReportCacheAccess(ctx context.Context, a CacheAccess) error
}

// ReadSource is an optional File capability: the datanode that last
// served a read of the given block through this file, "" if none did.
type ReadSource interface {
	ServedBy(blockID uint64) string
}

// ParamError is a job parameter missing or malformed: the user's mistake,
// found while the job is planned, before anything runs (`job run` exits
// 2 for it, as for any bad usage).
type ParamError struct{ Msg string }

func (e *ParamError) Error() string { return e.Msg }
