package tune

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"smarth/internal/diskperm"
)

// Record is one line of the transfer log: a block received.
type Record struct {
	Block      string    `json:"block"`
	Datanode   string    `json:"datanode"`
	Bytes      int64     `json:"bytes"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Packets    int64     `json:"packets"`
	PacketSize int64     `json:"packet_size"` // largest data length of the block's packets
	CPUSeconds float64   `json:"cpu_seconds"`
	// CPUScope says what CPUSeconds covers: "process" (getrusage
	// RUSAGE_SELF over start..end, all of the datanode's work).
	CPUScope string `json:"cpu_scope"`
	// Xceivers is the number of data connections open when the block
	// ended: 1 means the process CPU figure was this transfer's alone.
	Xceivers int     `json:"xceivers"`
	Peer     string  `json:"peer"`
	Client   string  `json:"client,omitempty"`
	Stage    string  `json:"stage"`
	Profile  string  `json:"profile"`
	Settings []State `json:"settings,omitempty"` // read back at the end of the transfer
}

// Seconds is the transfer's duration.
func (r Record) Seconds() float64 { return r.End.Sub(r.Start).Seconds() }

// Mbps is the throughput in megabits per second (10^6 bit), the paper's unit.
func (r Record) Mbps() float64 {
	s := r.Seconds()
	if s <= 0 {
		return 0
	}
	return float64(r.Bytes) * 8 / s / 1e6
}

// LogWriter appends records to a file, one JSON object per line. It
// rotates the file to path+".1" past MaxBytes so a long-lived datanode's
// log stays bounded.
type LogWriter struct {
	path     string
	maxBytes int64

	mu   sync.Mutex // guards f and size
	f    *os.File
	size int64
}

// DefaultLogMax is the size at which a transfer log rotates.
const DefaultLogMax = 64 << 20

// OpenLog opens (creating) the transfer log at path for appending.
func OpenLog(path string, maxBytes int64) (*LogWriter, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, diskperm.File)
	if err != nil {
		return nil, fmt.Errorf("transfer log: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if maxBytes <= 0 {
		maxBytes = DefaultLogMax
	}
	return &LogWriter{path: path, maxBytes: maxBytes, f: f, size: st.Size()}, nil
}

// Write appends one record. Each line goes out in one write call, so a
// reader polling the file never sees half a line followed by another.
func (w *LogWriter) Write(r Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return os.ErrClosed
	}
	if w.size+int64(len(b)) > w.maxBytes && w.size > 0 {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(b)
	w.size += int64(n)
	return err
}

func (w *LogWriter) rotate() error {
	w.f.Close()
	if err := os.Rename(w.path, w.path+".1"); err != nil {
		return err
	}
	f, err := os.OpenFile(w.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, diskperm.File)
	if err != nil {
		w.f = nil
		return err
	}
	w.f, w.size = f, 0
	return nil
}

// Close closes the file.
func (w *LogWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// ReadLog parses a transfer log. Malformed lines (a line cut by a crash)
// are counted and skipped, not fatal.
func ReadLog(r io.Reader) (recs []Record, bad int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var rec Record
		if json.Unmarshal(line, &rec) != nil || rec.Block == "" {
			bad++
			continue
		}
		recs = append(recs, rec)
	}
	return recs, bad, sc.Err()
}

// ReadLogFile reads a transfer log file from byte offset off and returns
// the records and the offset after the last complete line, so a caller
// can poll a growing log without re-reading it.
func ReadLogFile(path string, off int64) ([]Record, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, off, err
	}
	defer f.Close()
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, off, err
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, off, err
	}
	end := len(b)
	for end > 0 && b[end-1] != '\n' {
		end-- // a line still being written waits for the next poll
	}
	recs, _, err := ReadLog(bytesReader(b[:end]))
	return recs, off + int64(end), err
}
