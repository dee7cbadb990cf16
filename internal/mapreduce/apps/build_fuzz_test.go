package apps

import (
	"slices"
	"strings"
	"testing"

	"smarth/internal/mapreduce"
)

// FuzzBuild builds every app from arbitrary parameters, as they arrive
// in a job submission and again in each task launch ("k=v" lines; the
// first byte picks the app). No parameter may panic Build (the resource
// manager and node managers build jobs from what a client sent); a job
// that builds must be one the runtime can run and one each task can
// rebuild from the params the job carries, to the same shape.
func FuzzBuild(f *testing.F) {
	all := All()
	reg := mapreduce.NewRegistry(all...)
	base := "input=/in\noutput=/out\n"
	for i, a := range all {
		var extra []string
		for _, p := range a.Params() {
			if p.Default == "" && p.Name != ParamInput && p.Name != ParamOutput {
				extra = append(extra, p.Name+"=1")
			}
		}
		f.Add(uint8(i), base+strings.Join(extra, "\n"))
	}
	f.Add(uint8(0), base+"reduces=-1")
	f.Add(uint8(0), base+"reduces=9223372036854775807")
	f.Add(uint8(1), base+"regex=(")
	f.Add(uint8(2), "input=/a,,/b\noutput= /out ")
	f.Add(uint8(5), "output=/out\nrows=1e308\nmaps=0")
	f.Fuzz(func(t *testing.T, which uint8, text string) {
		app := all[int(which)%len(all)]
		params := map[string]string{}
		for _, line := range strings.Split(text, "\n") {
			k, v, _ := strings.Cut(line, "=")
			params[k] = v
		}
		plan, err := app.Build(params)
		if err != nil {
			return
		}
		if plan == nil {
			t.Fatalf("%s: nil job and no error", app.Name())
		}
		job, err := mapreduce.TaskJob(reg, app.Name(), withParams(plan.Params, params), plan.Output, plan.NumReduces)
		if err != nil {
			if plan.Output == "" || plan.NumReduces < 0 || plan.NewMapper == nil || (plan.NumReduces > 0 && plan.NewReducer == nil) {
				return // refused where it runs (and by the client's plan)
			}
			t.Fatalf("%s: built from %q but a task cannot rebuild it: %v", app.Name(), text, err)
		}
		if job.NumReduces != plan.NumReduces || job.Output != plan.Output || !slices.Equal(job.Input, plan.Input) {
			t.Fatalf("%s: a task rebuilds %v %q %d, the client built %v %q %d", app.Name(),
				job.Input, job.Output, job.NumReduces, plan.Input, plan.Output, plan.NumReduces)
		}
	})
}

// withParams is what a submission carries: the job's own params when it
// recorded them, else the user's.
func withParams(job, given map[string]string) map[string]string {
	if job != nil {
		return job
	}
	return given
}
