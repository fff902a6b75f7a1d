package ui

import (
	"errors"

	"github.com/ckpt-dev/ckpt/history"
)

// Every history question goes to package history; these say how its errors read as
// HTTP statuses.

func isHistoryBadInput(err error) bool {
	return errors.Is(err, history.ErrBadCursor) || errors.Is(err, history.ErrBadQuery)
}

func isHistoryNotFound(err error) bool { return errors.Is(err, history.ErrNoSection) }
