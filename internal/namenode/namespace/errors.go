package namespace

import "fmt"

// Kind classifies an error so the RPC layer can choose a status code.
type Kind uint8

const (
	Invalid       Kind = iota + 1 // malformed path or argument
	NotFound                      // the path does not exist
	Exists                        // the path exists
	NotDirectory                  // a parent is not a directory
	NotEmpty                      // directory not empty
	Denied                        // permission bits forbid it
	Precondition                  // wrong kind of inode, lease held, ...
	QuotaExceeded                 // a directory's name or space quota
)

// Error is a namespace error: "<op> <path>: <what went wrong>".
type Error struct {
	Op   string
	Path string
	Kind Kind
	Msg  string
}

func (e *Error) Error() string { return e.Op + " " + e.Path + ": " + e.Msg }

func errorf(op, path string, kind Kind, format string, args ...any) *Error {
	return &Error{Op: op, Path: path, Kind: kind, Msg: fmt.Sprintf(format, args...)}
}
