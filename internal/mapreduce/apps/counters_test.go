package apps

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"smarth/internal/mapreduce"
)

// TestWordCountMapOutputBytesBeforeCombine: MAP_OUTPUT_BYTES is what
// map() produced — a (word, "1") record per word — before the in-mapper
// table and the combiner shrink it, as Hadoop counts it; the File System
// Counters of a job over a local directory are FILE_*, its input read
// whole and its output written whole.
func TestWordCountMapOutputBytesBeforeCombine(t *testing.T) {
	e := newEnv(t)
	text := genText(3, 30000, 400)
	e.write("/in/a.txt", text)
	res := e.run("wordcount", "input", "/in", "output", "/out", "reduces", "2")

	var words, wantBytes int64
	for _, w := range strings.FieldsFunc(string(text), func(r rune) bool { return strings.ContainsRune(" \t\n\r\f", r) }) {
		words++
		wantBytes += int64(len(w) + len("1"))
	}
	tc := res.Counters[mapreduce.GroupTask]
	if got := tc[mapreduce.MapOutputBytes]; got != wantBytes {
		t.Errorf("MAP_OUTPUT_BYTES = %d, want %d: key and value bytes of one (word, 1) per word, before combining", got, wantBytes)
	}
	// What the combining left is far smaller than what map() produced.
	if tc[mapreduce.CombineOutputRecords] >= words/10 {
		t.Errorf("COMBINE_OUTPUT_RECORDS = %d of %d words: the test wants combining to shrink the output", tc[mapreduce.CombineOutputRecords], words)
	}
	fsc := res.Counters[mapreduce.GroupFS]
	if got := fsc[mapreduce.FileBytesRead]; got < int64(len(text)) {
		t.Errorf("FILE_BYTES_READ = %d, want at least the input's %d bytes", got, len(text))
	}
	out := int64(len(e.output("/out")))
	if got := fsc[mapreduce.FileBytesWritten]; got < out {
		t.Errorf("FILE_BYTES_WRITTEN = %d, want at least the output's %d bytes", got, out)
	}
	if _, ok := fsc[mapreduce.HDFSBytesRead]; ok {
		t.Errorf("a job over a local directory counted HDFS bytes: %v", fsc)
	}
}

// cpuOf is a getrusage figure as a duration.
func cpuOf(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestTaskCPUFromRusage: CPU_MILLISECONDS is measured, not made up: it is
// more than nothing for a job that does real work, and no more than the
// CPU this whole process spent meanwhile (tasks run as its goroutines).
func TestTaskCPUFromRusage(t *testing.T) {
	e := newEnv(t)
	e.write("/in/a.txt", genText(4, 60000, 5000))
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		t.Fatal(err)
	}
	res := e.run("wordcount", "input", "/in", "output", "/out", "reduces", "2")
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		t.Fatal(err)
	}
	tc := res.Counters[mapreduce.GroupTask]
	cpu := tc[mapreduce.CPUMillis]
	spent := (cpuOf(&after) - cpuOf(&before)).Milliseconds()
	if cpu <= 0 || cpu > spent+1 {
		t.Errorf("CPU_MILLISECONDS = %d, want more than 0 and at most the %d ms this process spent running the job", cpu, spent)
	}
	if _, ok := tc[mapreduce.GCTimeMillis]; !ok {
		t.Errorf("no GC_TIME_MILLIS counter: %v", tc)
	}
	if tc[mapreduce.PhysicalMemoryBytes] <= 0 {
		t.Errorf("PHYSICAL_MEMORY_BYTES = %d, want the sort buffers the maps filled", tc[mapreduce.PhysicalMemoryBytes])
	}
}

// TestStreamingCPUAndMemoryOfTheCommand: a Streaming task's figures
// include its command's own rusage (wait4: the process and what it
// waited for): a mapper that burns CPU in a shell loop shows at least the
// CPU this test process's reaped children spent, and its memory.
func TestStreamingCPUAndMemoryOfTheCommand(t *testing.T) {
	e := newEnv(t)
	e.write("/in/t.txt", []byte("a b\nc d\n"))
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &before); err != nil {
		t.Fatal(err)
	}
	burn := `i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; cat`
	res := e.run("streaming", "input", "/in", "output", "/out", "reduces", "0", "mapper", burn)
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &after); err != nil {
		t.Fatal(err)
	}
	children := (cpuOf(&after) - cpuOf(&before)).Milliseconds()
	tc := res.Counters[mapreduce.GroupTask]
	maps := res.Counters[mapreduce.GroupJob][mapreduce.LaunchedMaps]
	// Each task rounds its sum down to a millisecond.
	if cpu := tc[mapreduce.CPUMillis]; children < 50 || cpu+maps < children {
		t.Errorf("CPU_MILLISECONDS = %d over %d maps, want at least the %d ms the mapper commands spent (and they should spend 50 ms or more)", cpu, maps, children)
	}
	// A map-only Streaming job holds no sort buffer: the memory is the
	// command's.
	if tc[mapreduce.PhysicalMemoryBytes] < 100<<10 {
		t.Errorf("PHYSICAL_MEMORY_BYTES = %d, want the mapper command's resident size (a shell holds more than 100 KiB)", tc[mapreduce.PhysicalMemoryBytes])
	}
}
