package workload

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"smarth/internal/units"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Input kinds and the generator each is made with.
const (
	KindText   = "text"   // randomtextwriter: Grep, Sort, WordCount
	KindHive   = "hive"   // hivegen rankings + uservisits: Aggregation, Join
	KindPoints = "points" // kmeansgen: KMeans
	KindGraph  = "graph"  // pagerankgen: PageRank
)

func kinds() []string { return []string{KindText, KindHive, KindPoints, KindGraph} }

// appKinds says which input kind each app reads; an app not listed
// cannot be part of a workload (it would have no generated input).
func appKinds() map[string]string {
	return map[string]string{
		"grep": KindText, "sort": KindText, "wordcount": KindText,
		"aggregation": KindHive, "join": KindHive,
		"kmeans": KindPoints, "pagerank": KindGraph,
	}
}

// TableOneAffinity is the cache affinity of each app in the paper's
// Table 1, used when neither the workload file nor --affinity gives one.
// Measure this cluster's own with `smarth job affinity`.
func TableOneAffinity() map[string]float64 {
	return map[string]float64{
		"aggregation": 0.321, "grep": 0.638, "join": 0.182, "kmeans": 0.019,
		"pagerank": 0.117, "sort": 0.134, "wordcount": 0.087,
	}
}

// File is a workload file as written (the schema is in the package doc).
type File struct {
	Name        string           `yaml:"name"`
	Description string           `yaml:"description,omitempty"`
	Inputs      map[string]Input `yaml:"inputs"`
	Apps        []AppSpec        `yaml:"apps,omitempty"`
	Users       []UserSpec       `yaml:"users,omitempty"`
	Duration    string           `yaml:"duration,omitempty"`
	Share       float64          `yaml:"share,omitempty"`
}

// Input is one generated input as written.
type Input struct {
	Kind string `yaml:"kind"`
	Size string `yaml:"size"` // e.g. 320MiB
}

// AppSpec is one app of a workload as written.
type AppSpec struct {
	App      string            `yaml:"app"`
	Input    string            `yaml:"input"`
	Label    string            `yaml:"label,omitempty"`    // default: app, app-2, ... when repeated
	Affinity *float64          `yaml:"affinity,omitempty"` // default Table 1
	Params   map[string]string `yaml:"params,omitempty"`
}

// UserSpec is one user of a dynamic workload: it submits its apps in
// turn, one at a time (never overlapping itself), starting one every
// Every, or as soon as the previous one ends if that takes longer.
type UserSpec struct {
	Name  string    `yaml:"name"`
	Every string    `yaml:"every"`
	Apps  []AppSpec `yaml:"apps"`
}

// Workload is a checked workload.
type Workload struct {
	Name        string
	Description string
	Inputs      map[string]InputSpec
	Apps        []App  // static: submitted together, every run
	Users       []User // dynamic: submitted over Duration
	Duration    time.Duration
	Share       float64 // each app's share of the map slots; default 0.25
}

// InputSpec is a checked input.
type InputSpec struct {
	Name string
	Kind string
	Size int64
}

// App is a checked app of a workload.
type App struct {
	Label    string
	App      string
	Input    string
	Affinity float64
	Params   map[string]string
}

// User is a checked user of a dynamic workload.
type User struct {
	Name  string
	Every time.Duration
	Apps  []App
}

// Dynamic reports whether the workload is the section 5.5 kind.
func (w *Workload) Dynamic() bool { return len(w.Users) > 0 }

// Parse decodes and checks a workload file. Unknown keys are errors, so a
// misspelt field is not silently ignored.
func Parse(data []byte) (*Workload, error) {
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("bad YAML: %w", err)
	}
	return f.Check()
}

// Load reads and checks a workload file.
func Load(path string) (*Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	w, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("workload %s: %w", path, err)
	}
	return w, nil
}

// Find resolves a workload argument: an existing file, or a shipped
// workload's name (W1..W7, dynamic) looked up as
// testbed/workloads/<name>.yaml in dir and its parents, so the command
// works from anywhere in the repository.
func Find(arg, dir string) (string, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return arg, nil
	}
	if strings.ContainsAny(arg, "/.") {
		return "", fmt.Errorf("workload file %s does not exist", arg)
	}
	name := strings.ToLower(arg) + ".yaml"
	for d := dir; ; d = filepath.Dir(d) {
		p := filepath.Join(d, "testbed", "workloads", name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("no workload %q: give a file, or one of w1..w7, dynamic from testbed/workloads/ (run from inside the repository)", arg)
}

// Check checks the file and fills in the defaults.
func (f *File) Check() (*Workload, error) {
	if f.Name == "" {
		return nil, errors.New("name: missing")
	}
	w := &Workload{Name: f.Name, Description: f.Description, Inputs: map[string]InputSpec{}, Share: f.Share}
	if w.Share == 0 {
		w.Share = 0.25
	}
	if w.Share <= 0 || w.Share > 1 {
		return nil, fmt.Errorf("share %v: want a fraction of the map slots in (0, 1]", f.Share)
	}
	if err := w.checkInputs(f.Inputs); err != nil {
		return nil, err
	}
	switch {
	case len(f.Apps) > 0 && len(f.Users) > 0:
		return nil, errors.New("give apps (submitted together) or users (a dynamic workload), not both")
	case len(f.Apps) > 0:
		if f.Duration != "" {
			return nil, errors.New("duration: only a dynamic workload (users:) has one")
		}
		apps, err := w.checkApps("apps", f.Apps)
		if err != nil {
			return nil, err
		}
		w.Apps = apps
	case len(f.Users) > 0:
		if err := w.checkUsers(f); err != nil {
			return nil, err
		}
	default:
		return nil, errors.New("no apps: list them under apps: (or users: for a dynamic workload)")
	}
	return w, nil
}

func (w *Workload) checkInputs(in map[string]Input) error {
	if len(in) == 0 {
		return errors.New("no inputs: list them under inputs:")
	}
	for name, i := range in {
		if !slices.Contains(kinds(), i.Kind) {
			return fmt.Errorf("input %s: unknown kind %q (kinds: %s)", name, i.Kind, strings.Join(kinds(), ", "))
		}
		n, err := units.ParseSize(i.Size)
		if err != nil || n <= 0 {
			return fmt.Errorf("input %s: size %q: want a positive size such as 320MiB", name, i.Size)
		}
		w.Inputs[name] = InputSpec{Name: name, Kind: i.Kind, Size: n}
	}
	return nil
}

func (w *Workload) checkUsers(f *File) error {
	d, err := time.ParseDuration(f.Duration)
	if err != nil || d <= 0 {
		return fmt.Errorf("duration %q: a dynamic workload needs a positive duration such as 15m", f.Duration)
	}
	w.Duration = d
	seen := map[string]bool{}
	var all []AppSpec
	for _, u := range f.Users {
		if u.Name == "" || seen[u.Name] {
			return fmt.Errorf("user %q: every user needs a distinct name", u.Name)
		}
		seen[u.Name] = true
		every, err := time.ParseDuration(u.Every)
		if err != nil || every <= 0 {
			return fmt.Errorf("user %s: every %q: want a positive duration such as 60s", u.Name, u.Every)
		}
		if len(u.Apps) == 0 {
			return fmt.Errorf("user %s: no apps", u.Name)
		}
		w.Users = append(w.Users, User{Name: u.Name, Every: every})
		all = append(all, u.Apps...)
	}
	apps, err := w.checkApps("users", all)
	if err != nil {
		return err
	}
	for i := range w.Users {
		n := len(f.Users[i].Apps)
		w.Users[i].Apps, apps = apps[:n], apps[n:]
	}
	return nil
}

// checkApps checks each app against its input and labels repeated apps
// app, app-2, app-3 so that every label is one line of the results.
func (w *Workload) checkApps(where string, specs []AppSpec) ([]App, error) {
	known := appKinds()
	count := map[string]int{}
	labels := map[string]bool{}
	var out []App
	for i, s := range specs {
		kind, ok := known[s.App]
		if !ok {
			return nil, fmt.Errorf("%s[%d]: unknown app %q (workload apps: %s)", where, i, s.App, strings.Join(sortedKeys(known), ", "))
		}
		in, ok := w.Inputs[s.Input]
		if !ok {
			return nil, fmt.Errorf("%s[%d] %s: input %q is not under inputs: (inputs: %s)", where, i, s.App, s.Input, strings.Join(sortedKeys(w.Inputs), ", "))
		}
		if in.Kind != kind {
			return nil, fmt.Errorf("%s[%d] %s reads %s input, but %s is %s", where, i, s.App, kind, s.Input, in.Kind)
		}
		a := App{Label: s.Label, App: s.App, Input: s.Input, Affinity: TableOneAffinity()[s.App], Params: s.Params}
		if s.Affinity != nil {
			if *s.Affinity < 0 || *s.Affinity > 1 {
				return nil, fmt.Errorf("%s[%d] %s: affinity %v: want 0..1", where, i, s.App, *s.Affinity)
			}
			a.Affinity = *s.Affinity
		}
		count[s.App]++
		if a.Label == "" {
			a.Label = s.App
			if count[s.App] > 1 && where == "apps" {
				a.Label = fmt.Sprintf("%s-%d", s.App, count[s.App])
			}
		}
		if labels[a.Label] && where == "apps" {
			return nil, fmt.Errorf("%s[%d]: label %q used twice", where, i, a.Label)
		}
		labels[a.Label] = true
		out = append(out, a)
	}
	return out, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// Labels are the result lines of the workload: each app's label in order,
// for a dynamic workload each distinct app once.
func (w *Workload) Labels() []string {
	var out []string
	add := func(a App) {
		if !slices.Contains(out, a.Label) {
			out = append(out, a.Label)
		}
	}
	for _, a := range w.Apps {
		add(a)
	}
	for _, u := range w.Users {
		for _, a := range u.Apps {
			add(a)
		}
	}
	return out
}

// WorkingSet is the total size of the inputs the workload reads.
func (w *Workload) WorkingSet() int64 {
	var n int64
	for _, in := range w.Inputs {
		n += in.Size
	}
	return n
}
