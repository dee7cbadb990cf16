package ab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
)

// Shell runs command through /bin/sh -c and returns its wall time in
// seconds. Its output goes to out (nil discards it); on failure the error
// carries the output's last lines, so a failing benchmark or setup says
// why without the caller having kept the output.
func Shell(ctx context.Context, command string, out io.Writer) (float64, error) {
	var tail tailBuffer
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	w := io.Writer(&tail)
	if out != nil {
		w = io.MultiWriter(out, &tail)
	}
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	err := cmd.Run()
	secs := time.Since(start).Seconds()
	if err != nil {
		return secs, fmt.Errorf("%q: %w%s", command, err, tail.String())
	}
	return secs, nil
}

// SetupSwitch is a Switch that runs a side's setup command. If it fails,
// the other side's setup is run to put the host back into a known
// configuration (the user makes the two setups each other's restore:
// --a-setup starts a service, --b-setup stops it), and the error says
// what happened to both. Empty setups do nothing.
func SetupSwitch(setupA, setupB string, out io.Writer) Switch {
	return func(ctx context.Context, side Side) error {
		this, other := setupA, setupB
		if side == SideB {
			this, other = setupB, setupA
		}
		if this == "" {
			return nil
		}
		if _, err := Shell(ctx, this, out); err != nil {
			err = fmt.Errorf("setup of %s failed: %w", side, err)
			if other == "" {
				return err
			}
			// The context may be what failed; restore regardless.
			if _, rerr := Shell(context.WithoutCancel(ctx), other, out); rerr != nil {
				return errors.Join(err, fmt.Errorf("restoring with the setup of %s also failed: %w", 1-side, rerr))
			}
			return fmt.Errorf("%w (restored with the setup of %s)", err, 1-side)
		}
		return nil
	}
}

// tailBuffer keeps the last lines written to it.
type tailBuffer struct{ buf bytes.Buffer }

const tailKeep = 4096

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf.Write(p)
	if t.buf.Len() > 2*tailKeep {
		b := t.buf.Bytes()[t.buf.Len()-tailKeep:]
		t.buf = *bytes.NewBuffer(append([]byte(nil), b...))
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	s := strings.TrimSpace(t.buf.String())
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return "; output:\n  " + strings.Join(lines, "\n  ")
}
