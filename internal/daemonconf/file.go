package daemonconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// This file is the one way a daemon's config file is written and read.
// A launcher (internal/cluster, internal/testcluster,
// internal/testbed/daemonplan) builds the daemon's typed config, Keys
// turns the fields it set into the file's keys and merges the user's
// overrides (smarth cluster up --namenode-conf, a topology file's daemons
// sections, a test's extra keys) over them, each checked against the keys
// the daemon knows; the daemon reads the file back with Load.

// Roles are the daemon roles, in start order.
func Roles() []string { return []string{NameNode, DataNode, ResourceManager, NodeManager} }

// zero is the zero config of role, nil for no role.
func zero(role string) any {
	switch role {
	case NameNode:
		return NameNodeConfig{}
	case DataNode:
		return DataNodeConfig{}
	case ResourceManager:
		return ResourceManagerConfig{}
	case NodeManager:
		return NodeManagerConfig{}
	}
	return nil
}

// Config is a daemon's config file type.
type Config interface {
	NameNodeConfig | DataNodeConfig | ResourceManagerConfig | NodeManagerConfig
}

// roleOf is the role whose config cfg is.
func roleOf[C Config](cfg C) string {
	switch any(cfg).(type) {
	case NameNodeConfig:
		return NameNode
	case DataNodeConfig:
		return DataNode
	case ResourceManagerConfig:
		return ResourceManager
	}
	return NodeManager
}

// asKeys is v as the keys of a config file: what YAML makes of each
// field, durations as text ("30s") and sizes as numbers.
func asKeys(v any) (map[string]any, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Known is the keys a role's config file may hold, sorted (none for a
// role that is not a daemon's).
func Known(role string) []string {
	z := zero(role)
	if z == nil {
		return nil
	}
	m, err := asKeys(z)
	if err != nil { // the config types are plain data: this cannot fail
		panic(fmt.Sprintf("daemonconf: %s config: %v", role, err))
	}
	return slices.Sorted(maps.Keys(m))
}

// Keys is cfg as the keys of the daemon's config file, with each of
// overrides merged over them in turn (a later one wins).
//
// Only the fields of cfg that are not zero are written: the daemon reads
// its file over its own defaults (see Load), so a zero field keeps the
// daemon's default rather than forcing a zero over it (permissions_enabled
// would otherwise be written false by every launcher that did not think
// of it). A zero value the user means (permissions_enabled: false) comes
// as an override, which is written as given.
//
// Each override is checked as Check checks it, so a misspelt key, a key
// of another daemon or a value that does not fit the key's type fails
// here, naming the key, before any daemon starts.
func Keys[C Config](cfg C, overrides ...map[string]any) (map[string]any, error) {
	role := roleOf(cfg)
	all, err := asKeys(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s config: %w", role, err)
	}
	unset, _ := asKeys(zero(role))
	keys := map[string]any{}
	for k, v := range all {
		if !reflect.DeepEqual(v, unset[k]) {
			keys[k] = v
		}
	}
	for _, o := range overrides {
		if err := Check(role, o); err != nil {
			return nil, err
		}
		maps.Copy(keys, o)
	}
	return keys, nil
}

// Marshal is Keys as the YAML text of the config file.
func Marshal[C Config](cfg C, overrides ...map[string]any) ([]byte, error) {
	keys, err := Keys(cfg, overrides...)
	if err != nil {
		return nil, err
	}
	return yaml.Marshal(keys)
}

// checkKeys refuses a key that role's config does not have, naming the
// keys it has, and a value that does not decode into its key's field.
func checkKeys(role string, cfg map[string]any) error {
	z := zero(role)
	if z == nil {
		return fmt.Errorf("%s: no daemon config of that name (daemons with one: %s)", role, strings.Join(Roles(), ", "))
	}
	known := Known(role)
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		if !slices.Contains(known, k) {
			hint := ""
			if near := nearest(k, known); near != "" {
				hint = "did you mean " + near + "? "
			}
			return fmt.Errorf("%s: unknown config key %q (%sthe %s's keys: %s)", role, k, hint, role, strings.Join(known, ", "))
		}
		b, err := yaml.Marshal(map[string]any{k: cfg[k]})
		if err == nil {
			err = Decode(b, reflect.New(reflect.TypeOf(z)).Interface())
		}
		if err != nil {
			return fmt.Errorf("%s: %s: %v does not fit: %s", role, k, cfg[k], typeErr(err))
		}
	}
	return nil
}

// nearest is the known key closest to k by edit distance, if one is
// within two edits (a typo rather than another key): the key list is
// long, and the likely one is worth naming first.
func nearest(k string, known []string) string {
	best, bestD := "", 3
	for _, c := range known {
		if d := editDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes: keys are
// ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// typeErr is err without its "line 1: ", which names a line of a
// document the user never saw.
func typeErr(err error) string { return strings.TrimPrefix(err.Error(), "line 1: ") }

// Decode reads a daemon's config file over the values already in cfg (a
// pointer to its Config, holding the defaults): a key the file leaves out
// keeps its default, and an unknown key is an error so that a typo does
// not silently fall back to a default.
func Decode(data []byte, cfg any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
		return unknownKeys(err, cfg)
	}
	return nil
}

// notFound is how YAML says a key has no field: `line 3: field replicaton
// not found in type namenode.Config`.
var notFound = regexp.MustCompile(`^(line \d+: )field (\S+) not found in type \S+$`)

// unknownKeys rewrites YAML's unknown-field errors in err into the
// launchers' words: the key, the nearest known one and the keys cfg's
// type has (its fields tagged yaml:"-" are no keys).
func unknownKeys(err error, cfg any) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) || reflect.TypeOf(cfg).Kind() != reflect.Pointer {
		return err
	}
	all, kerr := asKeys(reflect.Zero(reflect.TypeOf(cfg).Elem()).Interface())
	if kerr != nil {
		return err
	}
	known := slices.Sorted(maps.Keys(all))
	msgs := make([]string, len(te.Errors))
	listed := false
	for i, e := range te.Errors {
		m := notFound.FindStringSubmatch(e)
		if m == nil {
			msgs[i] = e
			continue
		}
		msgs[i] = fmt.Sprintf("%sunknown config key %q", m[1], m[2])
		if near := nearest(m[2], known); near != "" {
			msgs[i] += fmt.Sprintf(" (did you mean %s?)", near)
		}
		listed = true
	}
	if listed {
		msgs = append(msgs, "known keys: "+strings.Join(known, ", "))
	}
	return errors.New(strings.Join(msgs, "; "))
}

// Load is Decode of the file at path, as the daemons read theirs.
func Load(path string, cfg any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := Decode(b, cfg); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}
