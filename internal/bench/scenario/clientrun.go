package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	"smarth/internal/bench"
	"smarth/internal/client"
)

// PutPlan is what the client process of one phase does (`smarth bench
// scenario-put`, run on the client host).
type PutPlan struct {
	Size        int64
	BlockSize   int64 // 0 = the namenode's
	Replication int   // 0 = the namenode's
	Modes       []string
	Runs        int   // timed runs per mode, the modes interleaved
	Warmup      int64 // untimed bytes each mode's client writes first; 0 = none
	Dir         string
	// FirstRun is the phase's first run in the campaign: the mode order
	// continues bench.RunOrder across phases, so with one run per phase
	// the first upload after a cluster start is not always the same mode's.
	FirstRun int
	// DropCaches empties the page cache before each upload (bench.Settle).
	DropCaches bool
	Out        io.Writer // one line per run; default discard

	// Client settings for experiments, passed to client.Config by the
	// command (PutRuns itself gets ready clients): Algorithm 2's threshold
	// (0: the client's default, 1: never swap the first target), the cap
	// on open pipelines (0: the client's default) and a file for the
	// clients' debug log ("" = none).
	LocalThreshold float64
	MaxPipelines   int
	ClientLog      string
}

// ClientRun is one upload as the client timed it.
type ClientRun struct {
	Mode    string    `json:"mode"`
	Client  string    `json:"client"` // the client name the datanodes log
	Seconds float64   `json:"seconds"`
	MiBps   float64   `json:"mib_per_s"`
	Start   time.Time `json:"start"` // just before the upload's timing began
	End     time.Time `json:"end"`   // just after the file was complete
}

// PhaseResult is what the client process of a phase reports.
type PhaseResult struct {
	Replication int         `json:"replication"`
	BlockSize   int64       `json:"block_size"`
	Warmups     []ClientRun `json:"warmups,omitempty"`
	Runs        []ClientRun `json:"runs"`
}

// PutRuns uploads p.Size bytes p.Runs times per mode, modes interleaved
// in bench.RunOrder, each mode through its own client from newFS, after an
// untimed warm-up upload per mode. The timing of each upload is bench.Put's, the same as
// `smarth bench put`.
func PutRuns(ctx context.Context, newFS func() (*client.FileSystem, error), p PutPlan) (*PhaseResult, error) {
	if p.Size <= 0 || p.Runs <= 0 || len(p.Modes) == 0 {
		return nil, errors.New("scenario put: size, runs and modes are required")
	}
	if p.Dir == "" {
		p.Dir = "/benchmarks/scenario"
	}
	if p.Out == nil {
		p.Out = io.Discard
	}
	clients := make([]*client.FileSystem, len(p.Modes))
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	for i := range p.Modes {
		c, err := newFS()
		if err != nil {
			return nil, err
		}
		clients[i] = c
	}
	res := &PhaseResult{}
	put := func(i int, size int64, dir string) (ClientRun, error) {
		start := time.Now()
		r, err := bench.Put(ctx, clients[i], bench.PutOptions{
			Size: size, BlockSize: p.BlockSize, Replication: p.Replication, Runs: 1,
			Modes: []string{p.Modes[i]}, Dir: dir, DropCaches: p.DropCaches,
		})
		if err != nil {
			return ClientRun{}, fmt.Errorf("%s upload of %d bytes: %w", p.Modes[i], size, err)
		}
		res.Replication, res.BlockSize = r.Replication, r.BlockSize
		run := r.Runs[0]
		return ClientRun{Mode: p.Modes[i], Client: clients[i].ClientName(), Seconds: run.Seconds, MiBps: run.MiBps,
			Start: start, End: time.Now()}, nil
	}
	if p.Warmup > 0 {
		for i := range p.Modes {
			run, err := put(i, p.Warmup, path.Join(p.Dir, "warmup"))
			if err != nil {
				return nil, err
			}
			res.Warmups = append(res.Warmups, run)
			fmt.Fprintf(p.Out, "warm-up %-14s %8.2f s  %8.1f MiB/s\n", run.Mode, run.Seconds, run.MiBps)
		}
	}
	order := make([]int, len(p.Modes))
	for i := range order {
		order[i] = i
	}
	for r := range p.Runs {
		for _, i := range bench.RunOrder(order, p.FirstRun+r) {
			run, err := put(i, p.Size, p.Dir)
			if err != nil {
				return res, err
			}
			res.Runs = append(res.Runs, run)
			fmt.Fprintf(p.Out, "run     %-14s %8.2f s  %8.1f MiB/s\n", run.Mode, run.Seconds, run.MiBps)
		}
	}
	return res, nil
}
