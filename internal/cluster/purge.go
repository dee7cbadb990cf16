package cluster

import (
	"fmt"
	"os"
	"path/filepath"
)

// Purge deletes a cluster home (data, logs, configs, state). It refuses a
// directory without a state file, so a mistyped --home never removes
// anything else, and a home with daemons still running.
func Purge(home string) error {
	st, err := LoadState(home)
	if err != nil {
		return fmt.Errorf("purge %s: %w", home, err)
	}
	for _, d := range st.Daemons {
		if d.PID > 0 && d.Running() {
			return fmt.Errorf("purge %s: %s (pid %d) is still running", home, d.Name, d.PID)
		}
	}
	// Only what the launcher creates; anything else a user put there stays.
	// keys, tokens and tls hold the cluster's secrets, users' tokens and
	// CA: they go with the cluster (a new one makes new ones).
	for _, sub := range []string{"bin", "conf", "data", "logs", "run", "sockets", "keys", "tokens", "tls", StateFile} {
		if err := os.RemoveAll(filepath.Join(home, sub)); err != nil {
			return err
		}
	}
	_ = os.Remove(home) // succeeds only if now empty
	return nil
}
