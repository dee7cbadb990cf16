package main

import (
	"bytes"
	"errors"
)

// runSmarth runs `smarth args...` in process and returns the exit status
// main would use, what the command printed and the error text.
func runSmarth(args ...string) (int, string, string) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetArgs(hadoopArgs(root, args))
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	err := root.Execute()
	if err == nil {
		return 0, out.String(), ""
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, out.String(), err.Error()
	}
	return 1, out.String(), err.Error()
}
