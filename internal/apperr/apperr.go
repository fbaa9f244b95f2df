// Package apperr is the one typed error of git ideate: a stable code and one
// sentence. Every layer returns it for bad input and refused operations, so
// the CLI prints "CODE: sentence" and the MCP server fills its envelope from
// the same value.
package apperr

import (
	"errors"
	"fmt"
)

// Code is a stable, upper-case identifier of a class of failure.
type Code string

// Codes shared by several packages. Packages may define further codes.
const (
	Schema         Code = "SCHEMA"          // a field, flag or argument is malformed
	CursorMismatch Code = "CURSOR_MISMATCH" // a cursor was replayed under another filter
	NotFound       Code = "NOT_FOUND"       // the named thing does not exist
	Locked         Code = "LOCKED"          // a ref lock is held and did not clear
	Conflict       Code = "CONFLICT"        // a compare-and-swap lost to another writer
	NotARepo       Code = "NOT_A_REPOSITORY"
	FormatVersion  Code = "FORMAT_VERSION" // data written by a newer git ideate
	Write          Code = "WRITE"          // an I/O failure while writing
	Internal       Code = "INTERNAL"
	// DanglingSupersedes: an edge (a supersedes or any other reference)
	// names a target that does not exist, as the reference implementation
	// names it; the record, steering and board stores all refuse it with
	// this code.
	DanglingSupersedes Code = "DANGLING_SUPERSEDES"

	// A gate's verdict, returned as an error by a call that judges (the
	// gates package) so that every face can act on it: the CLI maps each to
	// its own exit status, the MCP server puts it in the envelope.
	GateFail     Code = "GATE_FAIL"    // the gate judged the facts and they fail it
	Unverifiable Code = "UNVERIFIABLE" // the gate could not judge (an unreadable format, missing facts); never a pass
)

// Error is a typed failure: Code for programs, Msg (one sentence) for people.
type Error struct {
	Code Code
	Msg  string
	Err  error // optional cause, not shown in Error()
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Wrap returns an *Error carrying err as its cause.
func Wrap(code Code, err error, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...), Err: err}
}

// CodeOf returns the code of the first *Error in err's chain, INTERNAL for any
// other non-nil error, and "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// Is reports whether err carries the given code.
func Is(err error, code Code) bool { return err != nil && CodeOf(err) == code }

// Message returns the sentence of a typed error, or err.Error() otherwise.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return err.Error()
}
