package scenario

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// BlockRecord is one "block received" line of a datanode's log (the keys
// internal/datanode's doc promises to keep stable).
type BlockRecord struct {
	Host       string    `json:"host"`  // the datanode's host: whose log it is
	Block      string    `json:"block"` // blk_<id>_<gs>
	ID         uint64    `json:"id"`
	Bytes      int64     `json:"bytes"`
	Start      time.Time `json:"start"` // write request accepted
	End        time.Time `json:"end"`   // last packet stored
	Stage      string    `json:"stage"`
	Mode       string    `json:"mode"`
	Upstream   string    `json:"upstream"`
	Client     string    `json:"client"`
	Downstream int       `json:"downstream"` // datanodes after this one in the pipeline
}

// ParseBlockLog reads the block-receive lines of one datanode's JSON log.
// Other lines, and lines that are not JSON (a text log, a panic), are
// skipped: the log is evidence, not input that must be well-formed.
func ParseBlockLog(host string, r io.Reader) ([]BlockRecord, error) {
	var out []BlockRecord
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), `"block received"`) {
			continue
		}
		var l struct {
			Msg        string    `json:"msg"`
			Block      string    `json:"block"`
			Bytes      int64     `json:"bytes"`
			Start      time.Time `json:"start"`
			End        time.Time `json:"end"`
			Stage      string    `json:"stage"`
			Mode       string    `json:"mode"`
			Upstream   string    `json:"upstream"`
			Client     string    `json:"client"`
			Downstream int       `json:"downstream"`
		}
		if json.Unmarshal(line, &l) != nil || l.Msg != "block received" {
			continue
		}
		id, ok := blockID(l.Block)
		if !ok || l.End.Before(l.Start) {
			continue
		}
		out = append(out, BlockRecord{Host: host, Block: l.Block, ID: id, Bytes: l.Bytes, Start: l.Start, End: l.End,
			Stage: l.Stage, Mode: l.Mode, Upstream: l.Upstream, Client: l.Client, Downstream: l.Downstream})
	}
	return out, sc.Err()
}

// blockID takes the id out of "blk_<id>_<gs>".
func blockID(name string) (uint64, bool) {
	parts := strings.Split(name, "_")
	if len(parts) != 3 || parts[0] != "blk" {
		return 0, false
	}
	id, err := strconv.ParseUint(parts[1], 10, 64)
	return id, err == nil
}

// Diagnosis explains one timed upload from the datanodes' side.
type Diagnosis struct {
	Blocks int `json:"blocks"`
	// FirstHopMbit is the mean rate at which the first datanodes received
	// their blocks, Mbit/s (bytes over the time from the request to the
	// last packet stored, which includes setting up the pipeline).
	FirstHopMbit float64 `json:"first_hop_mbit"`
	// SlowFirst counts blocks whose first datanode the client cannot reach
	// at its link rate (another rack, a slower NIC).
	SlowFirst int `json:"slow_first"`
	// MeanOpen and MaxOpen count this client's pipelines that were open
	// (first request to last replica stored) when each block started,
	// the block itself included.
	MeanOpen float64 `json:"mean_open"`
	MaxOpen  int     `json:"max_open"`
	// BusyPct is the share of the run during which some first datanode was
	// receiving from the client: the rest went to namenode calls, pipeline
	// set-up, waiting for a free pipeline and draining at the end.
	BusyPct float64 `json:"busy_pct"`
	// TailSec is the time from the last block reaching its first datanode
	// to the end of the run: the last pipelines draining, then complete.
	TailSec float64 `json:"tail_s"`
	// FirstNodes counts blocks by the host of their first datanode.
	FirstNodes map[string]int `json:"first_nodes,omitempty"`
	// Copies counts block copies between datanodes (TRANSFER stages:
	// re-replication, pipeline repair) begun during the run: traffic that
	// competed with the upload on the datanodes' links.
	Copies int `json:"copies"`
}

// pipelineSpan is one block's pipeline as the logs show it.
type pipelineSpan struct {
	first      BlockRecord
	start, end time.Time // first request, last replica stored
}

// Diagnose explains the upload that client made between start and end,
// from every datanode's block records. slowFirst says whether a datanode
// host is slower than the client's link on the first hop (may be nil).
func Diagnose(recs []BlockRecord, client string, start, end time.Time, slowFirst func(host string) bool) Diagnosis {
	byID := map[uint64][]BlockRecord{}
	copies := 0
	for _, r := range recs {
		if r.Start.Before(start) || r.Start.After(end) {
			continue
		}
		if strings.HasPrefix(r.Stage, "TRANSFER") {
			copies++
			continue
		}
		if r.Client == client {
			byID[r.ID] = append(byID[r.ID], r)
		}
	}
	var spans []pipelineSpan
	for _, rs := range byID {
		// The first datanode is the one with the most nodes after it; on
		// a tie (a recovered pipeline) the earliest request.
		sort.Slice(rs, func(i, j int) bool {
			if rs[i].Downstream != rs[j].Downstream {
				return rs[i].Downstream > rs[j].Downstream
			}
			return rs[i].Start.Before(rs[j].Start)
		})
		sp := pipelineSpan{first: rs[0], start: rs[0].Start, end: rs[0].End}
		for _, r := range rs[1:] {
			if r.End.After(sp.end) {
				sp.end = r.End
			}
			if r.Start.Before(sp.start) {
				sp.start = r.Start
			}
		}
		spans = append(spans, sp)
	}
	d := Diagnosis{Blocks: len(spans), Copies: copies}
	if len(spans) == 0 {
		return d
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	d.FirstNodes = map[string]int{}
	var bytes int64
	var firstSecs, openSum float64
	for _, sp := range spans {
		f := sp.first
		bytes += f.Bytes
		firstSecs += f.End.Sub(f.Start).Seconds()
		d.FirstNodes[f.Host]++
		if slowFirst != nil && slowFirst(f.Host) {
			d.SlowFirst++
		}
		open := 0
		for _, o := range spans {
			if !o.start.After(sp.start) && o.end.After(sp.start) {
				open++
			}
		}
		openSum += float64(open)
		d.MaxOpen = max(d.MaxOpen, open)
	}
	if firstSecs > 0 {
		d.FirstHopMbit = float64(bytes) * 8 / firstSecs / 1e6
	}
	d.MeanOpen = openSum / float64(len(spans))
	firsts := make([][2]time.Time, len(spans))
	lastFirst := time.Time{}
	for i, sp := range spans {
		firsts[i] = [2]time.Time{sp.first.Start, sp.first.End}
		if sp.first.End.After(lastFirst) {
			lastFirst = sp.first.End
		}
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i][0].Before(firsts[j][0]) })
	if total := end.Sub(start).Seconds(); total > 0 {
		d.BusyPct = math.Min(100, union(firsts).Seconds()/total*100)
	}
	d.TailSec = math.Max(0, end.Sub(lastFirst).Seconds())
	return d
}

// union is the total length of intervals sorted by start.
func union(iv [][2]time.Time) time.Duration {
	var total time.Duration
	var curStart, curEnd time.Time
	for i, v := range iv {
		if i == 0 || v[0].After(curEnd) {
			total += curEnd.Sub(curStart)
			curStart, curEnd = v[0], v[1]
			continue
		}
		if v[1].After(curEnd) {
			curEnd = v[1]
		}
	}
	return total + curEnd.Sub(curStart)
}
