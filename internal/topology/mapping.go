package topology

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// MappingConfig says where the address → rack mapping comes from, as
// HDFS's net.topology.* settings do. Every source may be combined: the
// inline table wins over the table file, and both over the script.
type MappingConfig struct {
	// Table maps a hostname or IP to a rack (the namenode's "racks" key).
	Table map[string]string
	// TableFile is HDFS's net.topology.table.file.name: one "address rack"
	// pair per line, whitespace-separated, "#" starts a comment.
	TableFile string
	// Script is HDFS's net.topology.script.file.name: an executable run
	// with addresses as arguments that prints one rack per argument,
	// separated by white space, in the same order.
	Script string
	// ScriptTimeout bounds one run of Script (default 5s): the namenode
	// must not hang on a script that hangs.
	ScriptTimeout time.Duration
	// DefaultRack is the rack of a datanode nobody placed ("" =
	// DefaultRack).
	DefaultRack string
}

// DefaultScriptTimeout is how long one run of a topology script may take.
const DefaultScriptTimeout = 5 * time.Second

// negativeTTL is how long an address the script could not place (an error,
// a timeout, or the default rack) stays unplaced before the script is asked
// again: often enough that a fixed script is noticed within a minute,
// seldom enough that a broken one does not run on every block.
const negativeTTL = time.Minute

// scriptAnswer is one cached answer of the script.
type scriptAnswer struct {
	rack string // "" when the script could not place the address
	at   time.Time
}

// ParseTable reads a table file's contents: "address rack" per line. It
// names the line of the first bad entry.
func ParseTable(r io.Reader, name string) (map[string]string, error) {
	out := map[string]string{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch len(f) {
		case 0:
			continue
		case 2:
		default:
			return nil, fmt.Errorf("%s:%d: want \"address rack\", got %q", name, n, strings.TrimSpace(line))
		}
		if err := ValidateRack(f[1]); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		out[f[0]] = f[1]
	}
	return out, sc.Err()
}

// LoadTable reads a table file.
func LoadTable(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topology table: %w", err)
	}
	defer f.Close()
	return ParseTable(f, path)
}

// CheckScript reports why path cannot be run as a topology script.
func CheckScript(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("topology script: %w", err)
	}
	if st.IsDir() || st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("topology script %s is not an executable file", path)
	}
	return nil
}

// NewMapping builds a resolver from every source in c. It reads the table
// file once; the script runs on demand, its answers cached.
func NewMapping(c MappingConfig) (*Resolver, error) {
	table := map[string]string{}
	if c.TableFile != "" {
		t, err := LoadTable(c.TableFile)
		if err != nil {
			return nil, err
		}
		table = t
	}
	for k, v := range c.Table {
		table[k] = v
	}
	r, err := NewResolver(table, c.DefaultRack)
	if err != nil {
		return nil, err
	}
	if c.Script != "" {
		if err := CheckScript(c.Script); err != nil {
			return nil, err
		}
		r.script = c.Script
		r.timeout = c.ScriptTimeout
		if r.timeout <= 0 {
			r.timeout = DefaultScriptTimeout
		}
		r.cache = map[string]scriptAnswer{}
		r.now = time.Now
	}
	return r, nil
}

// fromScript asks the script for the racks of addrs it has no fresh answer
// for, in one run, and returns the rack of the first address it places.
func (r *Resolver) fromScript(addrs []string) (string, bool) {
	now := r.now()
	r.mu.Lock()
	var ask []string
	for _, a := range addrs {
		ans, ok := r.cache[a]
		switch {
		case ok && ans.rack != "":
			r.mu.Unlock()
			return ans.rack, true
		case ok && now.Sub(ans.at) < negativeTTL:
		default:
			ask = append(ask, a)
		}
	}
	r.mu.Unlock()
	if len(ask) == 0 {
		return "", false
	}
	racks, err := r.runScript(ask)
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, a := range ask {
		rack := ""
		if err == nil && racks[i] != r.defaultRack {
			rack = racks[i]
		}
		r.cache[a] = scriptAnswer{rack: rack, at: now}
	}
	if err != nil {
		r.lastErr = err
		return "", false
	}
	for _, a := range addrs {
		if ans := r.cache[a]; ans.rack != "" {
			return ans.rack, true
		}
	}
	return "", false
}

// runScript runs the script once for addrs and checks its answer.
func (r *Resolver) runScript(addrs []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.script, addrs...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("topology script %s %s: no answer within %v", r.script, strings.Join(addrs, " "), r.timeout)
	}
	if err != nil {
		return nil, fmt.Errorf("topology script %s %s: %v: %s", r.script, strings.Join(addrs, " "), err, strings.TrimSpace(stderr.String()))
	}
	racks := strings.Fields(string(out))
	if len(racks) != len(addrs) {
		return nil, fmt.Errorf("topology script %s: %d racks for %d addresses (%q)", r.script, len(racks), len(addrs), strings.TrimSpace(string(out)))
	}
	for _, rack := range racks {
		if err := ValidateRack(rack); err != nil {
			return nil, fmt.Errorf("topology script %s: %w", r.script, err)
		}
	}
	return racks, nil
}

// ScriptError returns the script's latest failure, and forgets it, so the
// namenode can log each failure once.
func (r *Resolver) ScriptError() error {
	if r.script == "" {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.lastErr
	r.lastErr = nil
	return err
}

// Lookup resolves the first of addrs the mapping knows (table first, then
// the script); ok is false when none is placed, so callers can tell an
// unplaced address from one placed in the default rack.
func (r *Resolver) Lookup(addrs ...string) (rack string, ok bool) {
	var known []string
	for _, a := range addrs {
		if a == "" {
			continue
		}
		if rack, ok := r.racks[a]; ok {
			return rack, true
		}
		known = append(known, a)
	}
	if r.script == "" || len(known) == 0 {
		return "", false
	}
	return r.fromScript(known)
}
