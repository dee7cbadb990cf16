package testbed

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os/exec"
	"strings"

	"smarth/internal/testbed/netplan"
)

// Runner runs one command of a plan.
type Runner interface {
	Run(ctx context.Context, cmd netplan.Cmd) error
}

// ExecRunner runs commands as child processes. Trace, if set, gets each
// command line before it runs.
type ExecRunner struct{ Trace io.Writer }

var _ Runner = ExecRunner{}

// Run runs cmd; its error names the command and carries its stderr.
func (r ExecRunner) Run(ctx context.Context, cmd netplan.Cmd) error {
	if r.Trace != nil {
		fmt.Fprintln(r.Trace, "+", cmd)
	}
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	var stderr bytes.Buffer
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return &CmdError{Cmd: cmd, Msg: msg}
	}
	return nil
}

// CmdError is a failed command and what it said.
type CmdError struct {
	Cmd netplan.Cmd
	Msg string
}

func (e *CmdError) Error() string { return fmt.Sprintf("%s: %s", e.Cmd, e.Msg) }

// runAll runs cmds in order and stops at the first failure.
func runAll(ctx context.Context, r Runner, cmds []netplan.Cmd) error {
	for _, c := range cmds {
		if err := r.Run(ctx, c); err != nil {
			return err
		}
	}
	return nil
}
