package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
)

// Plan is a job checked and ready to run: built by its app, inputs and
// output validated, prepared, and cut into splits. The job client and the
// local runner both make one before anything runs, so a mistake fails fast
// in the user's terminal.
type Plan struct {
	App    App
	Job    *Job
	Splits []Split
}

// PlanJob builds, validates, prepares and splits a job.
func PlanJob(ctx context.Context, fsys FS, reg *Registry, appName string, params map[string]string) (*Plan, error) {
	app, err := reg.Lookup(appName)
	if err != nil {
		return nil, err
	}
	if params == nil {
		params = map[string]string{}
	}
	job, err := app.Build(maps.Clone(params))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", appName, err)
	}
	if err := checkJob(app, job); err != nil {
		return nil, err
	}
	if _, err := fsys.Stat(ctx, job.Output); err == nil {
		return nil, fmt.Errorf("output directory %s already exists", job.Output)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("output %s: %w", job.Output, err)
	}
	for _, in := range job.Input {
		if _, err := fsys.Stat(ctx, in); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("input path %s does not exist", in)
		} else if err != nil {
			return nil, fmt.Errorf("input %s: %w", in, err)
		}
	}
	if p, ok := app.(Preparer); ok {
		if err := p.Prepare(ctx, fsys, job); err != nil {
			return nil, fmt.Errorf("%s: prepare: %w", appName, err)
		}
	}
	splits, err := inputFormat(job).Splits(ctx, fsys, job)
	if err != nil {
		return nil, err
	}
	for i := range splits {
		splits[i].Index = i
	}
	return &Plan{App: app, Job: job, Splits: splits}, nil
}

// checkJob rejects a job the runtime could not run.
func checkJob(app App, job *Job) error {
	if job.App == "" {
		job.App = app.Name()
	}
	if job.Name == "" {
		job.Name = job.App
	}
	if job.Params == nil {
		job.Params = map[string]string{}
	}
	switch {
	case job.Output == "":
		return fmt.Errorf("%s: no output directory (--output)", job.App)
	case job.NewMapper == nil:
		return fmt.Errorf("%s: job has no mapper", job.App)
	case job.NumReduces < 0:
		return fmt.Errorf("%s: negative number of reduces", job.App)
	case job.NumReduces > 0 && job.NewReducer == nil:
		return fmt.Errorf("%s: job has %d reduces but no reducer", job.App, job.NumReduces)
	}
	return nil
}

// TaskJob rebuilds a job where a task runs, from its app and params, with
// the output directory and reduce count the job was submitted with.
func TaskJob(reg *Registry, appName string, params map[string]string, output string, numReduces int) (*Job, error) {
	app, err := reg.Lookup(appName)
	if err != nil {
		return nil, err
	}
	job, err := app.Build(maps.Clone(params))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", appName, err)
	}
	job.Params = params
	job.Output = output
	job.NumReduces = numReduces
	return job, checkJob(app, job)
}
