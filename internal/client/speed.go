package client

import (
	"context"
	"sync"
	"time"

	"smarth/internal/client/pipeline"
	"smarth/internal/rpc/dfspb"
)

// speedReporter sends the client's speed records (SMARTH) to the namenode
// every Config.SpeedReport in a ClientHeartbeat, while files are being
// written (periodic) and until the samples of the last one are delivered.
type speedReporter struct {
	f    *FileSystem
	book *pipeline.SpeedBook

	seedOnce sync.Once // the host's records, fetched for the first multi-pipeline file

	periodic
}

func newSpeedReporter(f *FileSystem) *speedReporter {
	r := &speedReporter{f: f, book: pipeline.NewSpeedBook()}
	r.periodic = periodic{period: func() time.Duration { return f.cfg.SpeedReport }, task: r.report}
	return r
}

func (r *speedReporter) release() {
	if r.periodic.release() {
		// Deliver what the last file measured without waiting a period.
		go r.report()
	}
}

// report sends pending samples; on failure they go back for next time.
func (r *speedReporter) report() {
	samples := r.book.Take()
	if len(samples) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), r.f.cfg.RPCTimeout)
	defer cancel()
	_, err := r.f.nn.ClientHeartbeat(ctx, &dfspb.ClientHeartbeatRequest{
		ClientName: r.f.cfg.ClientName, ClientHost: r.f.cfg.ClientHost, Samples: samples,
	})
	if err != nil {
		r.book.Return(samples)
		r.f.log.Debug("client heartbeat failed", "err", err)
	}
}

// seed loads the records the namenode keeps for this client's host into
// the book, once per FileSystem, before its first multi-pipeline file:
// records belong to the host, so a new process (each `smarth fs put`)
// orders its pipelines by what earlier ones measured, as the namenode's
// placement does. An empty heartbeat first tells the namenode which host
// this client is on. Failures only cost the head start.
func (r *speedReporter) seed() {
	r.seedOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.f.cfg.RPCTimeout)
		defer cancel()
		name := r.f.cfg.ClientName
		if _, err := r.f.nn.ClientHeartbeat(ctx, &dfspb.ClientHeartbeatRequest{ClientName: name, ClientHost: r.f.cfg.ClientHost}); err != nil {
			r.f.log.Debug("client heartbeat failed; no host speed records", "err", err)
			return
		}
		resp, err := r.f.nn.GetSpeeds(ctx, &dfspb.GetSpeedsRequest{ClientName: name})
		if err != nil {
			r.f.log.Debug("reading the host's speed records failed", "err", err)
			return
		}
		for _, rec := range resp.GetRecords() {
			r.book.Seed(rec.GetDatanodeId(), rec.GetRecentBytesPerSec(), time.UnixMilli(rec.GetLastUnixMs()))
		}
		r.f.log.Debug("host speed records loaded", "records", len(resp.GetRecords()))
	})
}
