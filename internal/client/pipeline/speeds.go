package pipeline

import (
	"sync"
	"time"

	"smarth/internal/rpc/dfspb"
)

// SpeedBook holds a client's measured block transfers to first datanodes
// (SMARTH speed records): pending samples for the next client heartbeat
// and a moving average per datanode for Algorithm 2. Safe for concurrent
// use; one per FileSystem.
type SpeedBook struct {
	mu      sync.Mutex
	pending []*dfspb.SpeedSample // guarded by mu; bounded by maxPending
	avg     map[string]float64   // guarded by mu; bytes/s, EWMA per datanode id
	at      map[string]time.Time // guarded by mu; end of the latest transfer per datanode id
}

// maxPending bounds the samples kept between heartbeats when the namenode
// is unreachable; older ones are dropped first.
const maxPending = 4096

// ewmaWeight is the weight of a new sample in the per-node average: recent
// transfers count most, as the paper's "newly records".
const ewmaWeight = 0.5

// NewSpeedBook returns an empty book.
func NewSpeedBook() *SpeedBook {
	return &SpeedBook{avg: map[string]float64{}, at: map[string]time.Time{}}
}

// Record notes a transfer of bytes to datanode id that took d, ending at end.
func (b *SpeedBook) Record(id string, bytes int64, d time.Duration, end time.Time) {
	if b == nil || d <= 0 || bytes <= 0 || id == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) >= maxPending {
		b.pending = append(b.pending[:0], b.pending[1:]...)
	}
	b.pending = append(b.pending, &dfspb.SpeedSample{DatanodeId: id, Bytes: bytes, Nanos: d.Nanoseconds(), EndUnixMs: end.UnixMilli()})
	v := float64(bytes) / d.Seconds()
	if old, ok := b.avg[id]; ok {
		v = ewmaWeight*v + (1-ewmaWeight)*old
	}
	b.avg[id] = v
	b.at[id] = end
}

// Seed takes a record the namenode keeps for this client's host (measured
// by an earlier process on it) where the book has none of its own, so
// Algorithm 2 starts from what the host knows. It is not reported back.
func (b *SpeedBook) Seed(id string, bytesPerSec float64, at time.Time) {
	if b == nil || id == "" || bytesPerSec <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.avg[id]; ok {
		return
	}
	b.avg[id] = bytesPerSec
	b.at[id] = at
}

// Measured is when the latest transfer to datanode id ended.
func (b *SpeedBook) Measured(id string) (time.Time, bool) {
	if b == nil {
		return time.Time{}, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.at[id]
	return t, ok
}

// Speed implements Speeds.
func (b *SpeedBook) Speed(id string) (float64, bool) {
	if b == nil {
		return 0, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.avg[id]
	return v, ok
}

// Known lists the datanodes the book has a record of.
func (b *SpeedBook) Known() []string {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]string, 0, len(b.avg))
	for id := range b.avg {
		ids = append(ids, id)
	}
	return ids
}

// Take removes and returns the samples not yet reported.
func (b *SpeedBook) Take() []*dfspb.SpeedSample {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.pending
	b.pending = nil
	return out
}

// Return puts back samples a failed heartbeat could not deliver.
func (b *SpeedBook) Return(s []*dfspb.SpeedSample) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending = append(s, b.pending...)
	if n := len(b.pending) - maxPending; n > 0 {
		b.pending = b.pending[n:]
	}
}
