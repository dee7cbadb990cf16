// Package hostsfile reads the exclude files of HDFS and YARN
// (dfs.hosts.exclude, yarn.resourcemanager.nodes.exclude-path): the
// hosts an operator is taking out of service. Which daemon acts on the
// set, and how, is the daemon's (the namenode decommissions datanodes,
// the resource manager node managers); this package only says who is
// named. The namenode's maintenance file (hosts_maintenance_file) lists
// hosts with the time their maintenance ends.
package hostsfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// MaxSize bounds a file read into memory.
const MaxSize = 4 << 20

// Set is the names in a file, lower-cased.
type Set map[string]bool

// Has reports whether any of names (a hostname, an IP) is in the set,
// case-insensitively.
func (s Set) Has(names ...string) bool {
	for _, n := range names {
		if n != "" && s[strings.ToLower(n)] {
			return true
		}
	}
	return false
}

// Read returns the names in the file at path: hostnames or IPs separated
// by white space or lines, a host:port taken as its host, # starting a
// comment. key names the config key the path came from in errors. An
// empty path is an empty set.
func Read(key, path string) (Set, error) {
	out := Set{}
	b, err := readBounded(key, path)
	if err != nil || b == nil {
		return out, err
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		for _, name := range strings.Fields(line) {
			out[hostOf(name)] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s %s: %w", key, path, err)
	}
	return out, nil
}

// Maintenance is a maintenance file's hosts, each with the time its
// maintenance ends (the zero time: none).
type Maintenance map[string]time.Time

// Until returns when the maintenance of any of names ends and whether
// one is listed.
func (m Maintenance) Until(names ...string) (time.Time, bool) {
	for _, n := range names {
		if n == "" {
			continue
		}
		if t, ok := m[strings.ToLower(n)]; ok {
			return t, true
		}
	}
	return time.Time{}, false
}

// ReadMaintenance reads a maintenance file: one host per line (a
// hostname or IP, host:port taken as its host), optionally followed by
// the RFC 3339 time its maintenance ends, # starting a comment. An
// empty path is an empty set.
func ReadMaintenance(key, path string) (Maintenance, error) {
	out := Maintenance{}
	b, err := readBounded(key, path)
	if err != nil || b == nil {
		return out, err
	}
	for i, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		fields := strings.Fields(line)
		switch len(fields) {
		case 0:
			continue
		case 1, 2:
		default:
			return nil, fmt.Errorf("%s %s line %d: %q is not HOST [END-TIME]", key, path, i+1, strings.TrimSpace(line))
		}
		var until time.Time
		if len(fields) == 2 {
			if until, err = time.Parse(time.RFC3339, fields[1]); err != nil {
				return nil, fmt.Errorf("%s %s line %d: the end time %q is not RFC 3339 (2006-01-02T15:04:05Z07:00)", key, path, i+1, fields[1])
			}
		}
		out[hostOf(fields[0])] = until
	}
	return out, nil
}

// readBounded reads the file at path, at most MaxSize bytes; an empty
// path gives nil.
func readBounded(key, path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", key, path, err)
	}
	if len(b) > MaxSize {
		return nil, fmt.Errorf("%s %s: larger than %d bytes", key, path, MaxSize)
	}
	return b, nil
}

// hostOf is a listed name lower-cased, a host:port taken as its host (an
// IPv6 address has more colons).
func hostOf(name string) string {
	if h, _, ok := strings.Cut(name, ":"); ok && !strings.Contains(name[len(h)+1:], ":") {
		name = h
	}
	return strings.ToLower(name)
}
