package sched

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestScripts replays testdata/*.txt: each script declares a policy, nodes
// and jobs, then heartbeats each followed by the assignments it expects.
// Assigned tasks leave the pending lists and count as running, as the
// resource manager does.
//
//	policy delay NODE_SKIPS RACK_SKIPS | policy fifo
//	policy cachelocal NODE_SKIPS RACK_SKIPS CACHE_SKIPS MAX_ALLOCATIONS
//	node ID HOST RACK
//	job ID                       (submission order = declaration order)
//	map JOB INDEX HOST:RACK ... [cached=HOST,...]
//	                             (a pending map, its replicas, the hosts caching it)
//	cached JOB R                 (the job's cached input fraction R_j)
//	reduce JOB INDEX ...         (ready reduces)
//	running JOB N
//	hb NODE MAPSLOTS REDUCESLOTS
//	want A B ... | want -        (Assignment.String() of each, in order)
//	skips JOB N                  (delay, cachelocal)
func TestScripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.txt")
	if len(files) == 0 {
		t.Fatal("no scripts in testdata")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { runScript(t, f) })
	}
}

func runScript(t *testing.T, file string) {
	fh, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var (
		policy Policy
		nodes  = map[string]Node{}
		jobs   []Job
		last   []Assignment
		hbSeen bool
	)
	job := func(id string) *Job {
		for i := range jobs {
			if jobs[i].ID == id {
				return &jobs[i]
			}
		}
		t.Fatalf("%s: unknown job %s", file, id)
		return nil
	}
	atoi := func(s string) int {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("%s: bad number %q", file, s)
		}
		return n
	}
	sc := bufio.NewScanner(fh)
	for ln := 1; sc.Scan(); ln++ {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "#"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "policy":
			o := Options{}
			if len(f) > 3 {
				o.NodeSkips, o.RackSkips = atoi(f[2]), atoi(f[3])
			}
			if len(f) > 5 {
				o.CacheSkips, o.MaxAllocations = atoi(f[4]), atoi(f[5])
			}
			policy, err = New(f[1], o)
			if err != nil {
				t.Fatal(err)
			}
		case "node":
			nodes[f[1]] = Node{ID: f[1], Host: f[2], Rack: f[3]}
		case "job":
			jobs = append(jobs, Job{ID: f[1], Seq: int64(len(jobs))})
		case "map":
			j := job(f[1])
			mt := MapTask{Index: atoi(f[2])}
			for _, hr := range f[3:] {
				if hs, ok := strings.CutPrefix(hr, "cached="); ok {
					mt.CachedHosts = strings.Split(hs, ",")
					continue
				}
				h, r, _ := strings.Cut(hr, ":")
				mt.Hosts, mt.Racks = append(mt.Hosts, h), append(mt.Racks, r)
			}
			j.PendingMaps = append(j.PendingMaps, mt)
		case "cached":
			r, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatalf("%s:%d: bad fraction %q", file, ln, f[2])
			}
			job(f[1]).CachedFraction = r
		case "reduce":
			j := job(f[1])
			for _, s := range f[2:] {
				j.PendingReduces = append(j.PendingReduces, atoi(s))
			}
		case "running":
			job(f[1]).RunningTasks = atoi(f[2])
		case "limit":
			job(f[1]).MapLimit = atoi(f[2])
		case "hb":
			n, ok := nodes[f[1]]
			if !ok {
				t.Fatalf("%s:%d: unknown node %s", file, ln, f[1])
			}
			n.FreeMapSlots, n.FreeReduceSlots = atoi(f[2]), atoi(f[3])
			last = policy.Assign(n, jobs)
			hbSeen = true
			for _, a := range last {
				j := job(a.JobID)
				j.RunningTasks++
				if a.IsMap {
					j.PendingMaps = removeMap(j.PendingMaps, a.Index)
				} else {
					j.PendingReduces = removeInt(j.PendingReduces, a.Index)
				}
			}
		case "want":
			if !hbSeen {
				t.Fatalf("%s:%d: want before any hb", file, ln)
			}
			var got []string
			for _, a := range last {
				got = append(got, a.String())
			}
			want := f[1:]
			if len(want) == 1 && want[0] == "-" {
				want = nil
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s:%d: got [%s], want [%s]", file, ln, strings.Join(got, " "), strings.Join(want, " "))
			}
		case "skips":
			d, ok := policy.(interface{ Skips(string) int })
			if !ok {
				t.Fatalf("%s:%d: skips needs a policy that counts skips", file, ln)
			}
			if got := d.Skips(f[1]); got != atoi(f[2]) {
				t.Errorf("%s:%d: skips of %s = %d, want %s", file, ln, f[1], got, f[2])
			}
		default:
			t.Fatalf("%s:%d: unknown command %q", file, ln, f[0])
		}
	}
}

func removeMap(ts []MapTask, idx int) []MapTask {
	for i, t := range ts {
		if t.Index == idx {
			return append(ts[:i:i], ts[i+1:]...)
		}
	}
	return ts
}

func removeInt(xs []int, x int) []int {
	for i, v := range xs {
		if v == x {
			return append(xs[:i:i], xs[i+1:]...)
		}
	}
	return xs
}

func TestUnknownPolicy(t *testing.T) {
	if _, err := New("nope", Options{}); err == nil || !strings.Contains(err.Error(), "cachelocal, delay, fifo") {
		t.Fatalf("New(nope) = %v, want an error listing the policies", err)
	}
}
