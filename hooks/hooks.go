// Package hooks installs and runs the triggers that take checkpoints without being asked:
// git hooks, Claude Code hooks and a cron or systemd schedule. It also keeps the unversioned
// state those triggers need under <home>/state/: per-session change detection, the circuit
// breaker, the tick lock and the append-only receipts of every action.
//
// The checkpoints themselves are syncs (package sync) committed through package
// checkpoint; the Runner decides which and runs them. Installing touches only files ckpt
// owns or edits with care (hook scripts, a Claude Code settings file, the user's crontab,
// .gitattributes), and runs git to find where a repository keeps its hooks and to set the
// merge driver in its config.
package hooks

import (
	"errors"
	"path/filepath"
)

// ErrBusy is returned when the state lock could not be taken in time.
var ErrBusy = errors.New("busy")

// stateDir is where every unversioned file of a store lives.
func stateDir(home string) string { return filepath.Join(home, "state") }
