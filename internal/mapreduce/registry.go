package mapreduce

import (
	"fmt"
	"sort"
	"strings"
)

// Registry maps app names to apps. It is built once from a list (the apps
// engineer's apps.All(), plus test-only apps) and handed to whoever needs
// it: the job CLI, the local runner and every node manager. There is no
// package-level registry on purpose: tests build their own.
type Registry struct {
	apps map[string]App
}

// NewRegistry returns a registry holding apps. A later app with the same
// name as an earlier one replaces it, so tests can override an app.
func NewRegistry(apps ...App) *Registry {
	r := &Registry{apps: make(map[string]App, len(apps))}
	for _, a := range apps {
		r.apps[a.Name()] = a
	}
	return r
}

// Lookup returns the app with the given name, or an error naming the known
// apps.
func (r *Registry) Lookup(name string) (App, error) {
	if r != nil {
		if a, ok := r.apps[name]; ok {
			return a, nil
		}
	}
	return nil, fmt.Errorf("unknown app %q (known: %s)", name, strings.Join(r.Names(), ", "))
}

// Names lists the registered app names in order.
func (r *Registry) Names() []string {
	if r == nil {
		return nil
	}
	names := make([]string, 0, len(r.apps))
	for n := range r.apps {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Apps lists the registered apps ordered by name.
func (r *Registry) Apps() []App {
	var out []App
	for _, n := range r.Names() {
		out = append(out, r.apps[n])
	}
	return out
}

// RunsCommands reports whether the app named runs a command line of the
// submitter's choosing on the node managers (Hadoop Streaming). Such a
// command runs with the node manager's OS rights, not the submitter's,
// so a resource manager accepts these jobs only when configured to
// (allow_streaming). The resource manager knows apps by name only, hence
// a name here; apps' tests check that every app that executes commands is
// named.
func RunsCommands(app string) bool { return app == "streaming" }
