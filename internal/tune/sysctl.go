package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"smarth/internal/atomicfile"
	"strings"
	"time"
)

// Sysctls changes host-wide settings under Root (normally /proc/sys; a
// plain directory tree in tests) and keeps the old values in RevertFile
// until they are restored.
type Sysctls struct {
	Root       string
	RevertFile string
}

// revert is the revert file's content.
type revert struct {
	Written time.Time         `json:"written"`
	PID     int               `json:"pid"`
	Old     map[string]string `json:"old"` // sysctl name -> value before the change
}

func (s Sysctls) path(name string) string {
	return filepath.Join(s.Root, strings.ReplaceAll(name, ".", "/"))
}

// Apply sets values (sysctl names, e.g. net.core.busy_read). In order:
// every name and value is validated, every file is checked readable and
// writable, the revert file is written and synced, and only then are
// values written. If any write fails, what was written is restored and
// the revert file removed: the host is left as it was.
func (s Sysctls) Apply(values map[string]string) error {
	if _, err := os.Stat(s.RevertFile); err == nil {
		return fmt.Errorf("sysctl: revert file %s exists: an earlier change was not restored (run `smarth tune sysctl --restore` first)", s.RevertFile)
	}
	p := Profile{Name: "sysctl", Settings: values}
	for name := range values {
		if st, ok := Lookup(name); ok && st.Level != Sysctl {
			return fmt.Errorf("sysctl: %s is a %s setting, not a sysctl", name, st.Level)
		}
	}
	if err := p.Validate(Host{ProcSys: s.Root}); err != nil {
		return fmt.Errorf("sysctl: %w", err)
	}
	old, err := s.checkWritable(p.Names())
	if err != nil {
		return err
	}
	if err := writeSynced(s.RevertFile, revert{Written: time.Now(), PID: os.Getpid(), Old: old}); err != nil {
		return fmt.Errorf("sysctl: writing revert file before any change: %w", err)
	}
	var done []string
	for _, name := range p.Names() {
		if err := os.WriteFile(s.path(name), []byte(values[name]+"\n"), 0o644); err != nil {
			for _, d := range done {
				_ = os.WriteFile(s.path(d), []byte(old[d]+"\n"), 0o644)
			}
			_ = os.Remove(s.RevertFile)
			return fmt.Errorf("sysctl: setting %s=%s: %w (earlier changes restored)", name, values[name], err)
		}
		done = append(done, name)
	}
	return nil
}

// checkWritable reads each current value and opens each file for writing
// without writing, so that a permission problem shows before anything
// changes.
func (s Sysctls) checkWritable(names []string) (map[string]string, error) {
	old := map[string]string{}
	for _, name := range names {
		b, err := os.ReadFile(s.path(name))
		if err != nil {
			return nil, fmt.Errorf("sysctl: reading %s: %w; nothing was changed", name, err)
		}
		old[name] = strings.Join(strings.Fields(string(b)), " ")
		f, err := os.OpenFile(s.path(name), os.O_WRONLY, 0)
		if err != nil {
			if errors.Is(err, os.ErrPermission) {
				return nil, fmt.Errorf("sysctl: no permission to change %s (run as root, outside a read-only /proc/sys): %w; nothing was changed", name, err)
			}
			return nil, fmt.Errorf("sysctl: %s: %w; nothing was changed", name, err)
		}
		f.Close()
	}
	return old, nil
}

// Restore writes back the values in the revert file and removes it. With
// no revert file it does nothing and returns nil, so it is safe to call at
// every start (the crash case) and on every exit.
func (s Sysctls) Restore() (map[string]string, error) {
	b, err := os.ReadFile(s.RevertFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sysctl: reading revert file: %w", err)
	}
	var r revert
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("sysctl: revert file %s is damaged (%v); restore by hand", s.RevertFile, err)
	}
	var errs []error
	for name, v := range r.Old {
		if err := os.WriteFile(s.path(name), []byte(v+"\n"), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restoring %s=%s: %w", name, v, err))
		}
	}
	if len(errs) > 0 {
		return r.Old, fmt.Errorf("sysctl: %w (revert file kept)", errors.Join(errs...))
	}
	return r.Old, os.Remove(s.RevertFile)
}

// writeSynced writes v as JSON to path durably: temp file, fsync, rename,
// fsync of the directory — a crash leaves either no file or a whole one.
func writeSynced(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b, 0o600)
}
