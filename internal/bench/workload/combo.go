package workload

import (
	"fmt"
	"strings"
)

// Combo is one policy combination of Fig. 11: a cache policy and a
// scheduler; Pin means directives on every input before the runs (DL-NR).
// AffinitySource is the namenode's cache_affinity_source ("" its
// default, learned): clbgtable is CL-BG steered by Table 1's affinities
// (or --affinity) as the paper ran it, beside clbg's learned estimates,
// so that a run says how much of BG's gain the estimate makes.
type Combo struct {
	Name           string `json:"name"`
	Policy         string `json:"policy"`
	Scheduler      string `json:"scheduler"`
	Pin            bool   `json:"pin,omitempty"`
	AffinitySource string `json:"affinity_source,omitempty"`
}

// Combos are the paper's five versions of Hadoop, by their short names.
func Combos() []Combo {
	return []Combo{
		{Name: "nocache", Policy: "none", Scheduler: "delay"},
		{Name: "dlnr", Policy: "pinned", Scheduler: "delay", Pin: true},
		{Name: "cllru", Policy: "lru", Scheduler: "cachelocal"},
		{Name: "clca", Policy: "ca", Scheduler: "cachelocal"},
		{Name: "clbg", Policy: "bg", Scheduler: "cachelocal"},
		{Name: "clbgtable", Policy: "bg", Scheduler: "cachelocal", AffinitySource: "table"},
	}
}

// nameNodeConfig is the namenode configuration the combination sets
// beyond the cache policy.
func (c Combo) nameNodeConfig() map[string]any {
	if c.AffinitySource == "" {
		return nil
	}
	return map[string]any{"cache_affinity_source": c.AffinitySource}
}

// ParseCombos reads "nocache,dlnr,cllru,clca,clbg".
func ParseCombos(s string) ([]Combo, error) {
	byName := map[string]Combo{}
	var names []string
	for _, c := range Combos() {
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	var out []Combo
	for _, n := range strings.Split(s, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		n = strings.ReplaceAll(strings.ReplaceAll(n, "-", ""), "_", "") // accept CL-BG, dl_nr
		c, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown policy combination %q (known: %s)", n, strings.Join(names, ", "))
		}
		out = append(out, c)
	}
	return out, nil
}
