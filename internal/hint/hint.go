// Package hint attaches to an error what the user can do about it. The CLI prints an error
// as `ckpt: <message>` and its hint, when it has one, as `ckpt: hint: <hint>`; the message
// itself never carries the hint, so wrapping, comparing and logging it stay simple.
package hint

import (
	"errors"
	"fmt"
)

// hinted is an error with a hint.
type hinted struct {
	err  error
	hint string
}

func (e *hinted) Error() string { return e.err.Error() }
func (e *hinted) Unwrap() error { return e.err }

// Hint says what to do about the error.
func (e *hinted) Hint() string { return e.hint }

// New returns err with a hint; format and args are as for fmt.Sprintf.
func New(err error, format string, args ...any) error {
	return &hinted{err: err, hint: fmt.Sprintf(format, args...)}
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
