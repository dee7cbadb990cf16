package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"strings"

	"smarth/internal/pathglob"
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
	if h, ok := fsys.(Homed); ok {
		job.Output = resolve(h.Home(), job.Output)
		for i, in := range job.Input {
			job.Input[i] = resolve(h.Home(), in)
		}
	}
	if _, err := fsys.Stat(ctx, job.Output); err == nil {
		return nil, fmt.Errorf("output directory %s already exists", job.Output)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("output %s: %w", job.Output, err)
	}
	if job.Input, err = ExpandInputs(ctx, fsys, job.Input); err != nil {
		return nil, err
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
	if _, err := ShippedOf(job.Params); err != nil {
		return err
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

// Homed is a file system with a home directory that relative job paths
// resolve against: the DFS's /user/USER, as Hadoop's working directory.
type Homed interface{ Home() string }

func resolve(home, p string) string {
	if p == "" || strings.HasPrefix(p, "/") {
		return p
	}
	return path.Join(home, p)
}

// ExpandInputs turns a job's input paths into the paths it reads, as
// Hadoop's FileInputFormat does: a glob (`/data/text/part-*`,
// `/logs/{a,b}`) becomes its matches, in order, and a pattern matching
// nothing or a path that does not exist is an error worded as Hadoop's.
func ExpandInputs(ctx context.Context, fsys FS, inputs []string) ([]string, error) {
	var out []string
	for _, in := range inputs {
		if !pathglob.Has(in) {
			if _, err := fsys.Stat(ctx, in); errors.Is(err, fs.ErrNotExist) {
				return nil, inputMissing(in)
			} else if err != nil {
				return nil, fmt.Errorf("input %s: %w", in, err)
			}
			out = append(out, in)
			continue
		}
		ms, err := pathglob.Expand(ctx, globNamespace{fsys}, in)
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", in, err)
		}
		if len(ms) == 0 {
			return nil, fmt.Errorf("Input Pattern %s matches 0 files", in)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// globNamespace matches input patterns against a job's file system.
type globNamespace struct{ fs FS }

func (n globNamespace) Names(ctx context.Context, dir string) ([]string, error) {
	ents, err := n.fs.List(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		if e.Path != dir { // a file lists itself
			names = append(names, path.Base(e.Path))
		}
	}
	return names, nil
}

func (n globNamespace) Exists(ctx context.Context, p string) (bool, error) {
	_, err := n.fs.Stat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// SplitPaths splits a comma-separated list of paths, leaving the commas
// of a glob's {a,b} alternatives alone, as Hadoop's
// FileInputFormat.getPathStrings does: "/a,/logs/{x,y}" is two paths.
func SplitPaths(s string) []string {
	var out []string
	depth, start := 0, 0
	add := func(p string) {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				add(s[start:i])
				start = i + 1
			}
		}
	}
	add(s[start:])
	return out
}
