// Package hint attaches to an error what the user can do about it. The CLI prints an error
// as `ckpt: <message>` and its hint, when it has one, as `ckpt: hint: <hint>`; the message
// itself never carries the hint, so wrapping, comparing and logging it stay simple.
package hint

import (
	"errors"
	"fmt"
)

// Error is an error with a hint.
type Error struct {
	Err  error
	Text string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Hint says what to do about the error.
func (e *Error) Hint() string { return e.Text }

// New returns err with a hint; format and args are as for fmt.Sprintf.
func New(err error, format string, args ...any) error {
	return &Error{Err: err, Text: fmt.Sprintf(format, args...)}
}

// Of returns the hint of the first error in err's tree that has one (any error with a
// Hint() string method), or "".
func Of(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
