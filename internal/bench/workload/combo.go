package workload

import (
	"fmt"
	"strings"
)

// Combo is one policy combination of Fig. 11: a cache policy and a
// scheduler; Pin means directives on every input before the runs (DL-NR).
type Combo struct {
	Name      string `json:"name"`
	Policy    string `json:"policy"`
	Scheduler string `json:"scheduler"`
	Pin       bool   `json:"pin,omitempty"`
}

// Combos are the paper's five versions of Hadoop, by their short names.
func Combos() []Combo {
	return []Combo{
		{Name: "nocache", Policy: "none", Scheduler: "delay"},
		{Name: "dlnr", Policy: "pinned", Scheduler: "delay", Pin: true},
		{Name: "cllru", Policy: "lru", Scheduler: "cachelocal"},
		{Name: "clca", Policy: "ca", Scheduler: "cachelocal"},
		{Name: "clbg", Policy: "bg", Scheduler: "cachelocal"},
	}
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
