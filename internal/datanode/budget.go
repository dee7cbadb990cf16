package datanode

import (
	"fmt"
	"sync"

	"smarth/internal/rpc/dfspb"
)

// clientState is what a datanode tracks per multi-pipeline client: the
// blocks it is writing here (at most one: a datanode is in at most one open
// pipeline of a client, seed 000 III.C) and the bytes it has buffered here
// but not yet forwarded downstream.
type clientState struct {
	blocks map[uint64]int // open pipelines per block id (a recovery briefly overlaps its predecessor)
	budget *budget
}

// claimPipeline registers a multi-pipeline write of block id by client. A
// second pipeline of the same client for another block is refused; a
// pipeline for the same block (recovery) is allowed. The returned release
// must be called once when the pipeline ends.
func (d *DataNode) claimPipeline(client string, id uint64) (*clientState, func(), error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cs := d.clients[client]
	if cs == nil {
		cs = &clientState{blocks: map[uint64]int{}, budget: newBudget(d.cfg.PerClientBuffer, d.bufferChanged)}
		d.clients[client] = cs
	}
	for other, n := range cs.blocks {
		if other != id && n > 0 {
			return nil, nil, fmt.Errorf("client %s already has an open pipeline through this datanode (block blk_%d); a datanode is in at most one open pipeline of a client", client, other)
		}
	}
	cs.blocks[id]++
	var once sync.Once
	release := func() {
		once.Do(func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if cs.blocks[id]--; cs.blocks[id] <= 0 {
				delete(cs.blocks, id)
			}
			if len(cs.blocks) == 0 && cs.budget.idle() {
				delete(d.clients, client)
			}
		})
	}
	return cs, release, nil
}

var busyStatus = dfspb.OpStatus_OP_STATUS_ERROR_BUSY

// budget bounds bytes held in memory for one client: acquire blocks while
// the bound is reached, which stops the receiver reading its socket so TCP
// pushes back on the client.
type budget struct {
	mu       sync.Mutex
	capacity int64
	used     int64         // guarded by mu
	freed    chan struct{} // guarded by mu: closed and replaced whenever bytes are released
	changed  func(delta, used int64)
}

func newBudget(capacity int64, changed func(delta, used int64)) *budget {
	return &budget{capacity: capacity, freed: make(chan struct{}), changed: changed}
}

// bufferChanged feeds the buffered-bytes gauge and the high-water mark.
func (d *DataNode) bufferChanged(delta, used int64) {
	d.metrics.bufferedBytes.Add(float64(delta))
	for {
		high := d.bufferHigh.Load()
		if used <= high || d.bufferHigh.CompareAndSwap(high, used) {
			return
		}
	}
}

// acquire takes n bytes, waiting for room; a single request larger than the
// whole budget is let through when nothing else is held. It returns false
// if stop is closed first.
func (b *budget) acquire(n int64, stop <-chan struct{}) bool {
	for {
		b.mu.Lock()
		if b.used == 0 || b.used+n <= b.capacity {
			b.used += n
			used := b.used
			b.mu.Unlock()
			b.changed(n, used)
			return true
		}
		wait := b.freed
		b.mu.Unlock()
		select {
		case <-wait:
		case <-stop:
			return false
		}
	}
}

func (b *budget) release(n int64) {
	b.mu.Lock()
	b.used -= n
	used := b.used
	close(b.freed)
	b.freed = make(chan struct{})
	b.mu.Unlock()
	b.changed(-n, used)
}

func (b *budget) idle() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used == 0
}
