package main

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// parseConfPairs adds KEY=VALUE flags to a daemon's extra config, each
// value read as YAML so that booleans, numbers and durations keep the type
// the daemon's config expects.
func parseConfPairs(pairs []string, into map[string]any) error {
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return fmt.Errorf("%q is not KEY=VALUE", p)
		}
		var val any
		if err := yaml.Unmarshal([]byte(v), &val); err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		into[k] = val
	}
	return nil
}
