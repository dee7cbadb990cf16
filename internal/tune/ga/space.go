package ga

import (
	"fmt"
	"strconv"
	"strings"
)

// Gene is one searched setting: a name and the values it may take. The
// GA works on indexes into Values, so numeric and named settings (a
// congestion control algorithm) are searched alike.
type Gene struct {
	Name   string
	Values []string
}

// Space is the declared search space, one gene per setting.
type Space []Gene

// Genome holds one index into each gene's Values, in Space order.
type Genome []int

// Validate refuses an empty space or a gene without values.
func (s Space) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("ga: empty search space")
	}
	seen := map[string]bool{}
	for _, g := range s {
		if len(g.Values) == 0 {
			return fmt.Errorf("ga: gene %q has no values", g.Name)
		}
		if seen[g.Name] {
			return fmt.Errorf("ga: gene %q declared twice", g.Name)
		}
		seen[g.Name] = true
	}
	return nil
}

// Size is the number of distinct genomes (saturating at 1<<62).
func (s Space) Size() int64 {
	n := int64(1)
	for _, g := range s {
		if n > (1<<62)/int64(len(g.Values)) {
			return 1 << 62
		}
		n *= int64(len(g.Values))
	}
	return n
}

// Values maps each gene's name to the value g selects.
func (s Space) Values(g Genome) map[string]string {
	m := make(map[string]string, len(s))
	for i, gene := range s {
		m[gene.Name] = gene.Values[g[i]]
	}
	return m
}

// Describe renders g as "name=value ..." in space order.
func (s Space) Describe(g Genome) string {
	parts := make([]string, len(s))
	for i, gene := range s {
		parts[i] = gene.Name + "=" + gene.Values[g[i]]
	}
	return strings.Join(parts, " ")
}

// Key is a compact identity of g for memoization.
func (g Genome) Key() string {
	var b strings.Builder
	for i, v := range g {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(v))
	}
	return b.String()
}

func (g Genome) clone() Genome { return append(Genome(nil), g...) }
