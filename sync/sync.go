// Package sync reconciles a session's files (seed 002's sparse and full checkpoints): `Sync`
// routes notes.md into the checkpoint section by section, keeps every literal, tidies §3,
// recovers the delta from transcripts and logs, renders the task tree, spills sections over
// budget, and promotes Key Decisions into the knowledge graph. The result is committed
// through package checkpoint, the one path to a commit.
//
// It never prints: results come back as values for cmd/ckpt to show.
package sync

import (
	"maps"
	"slices"

	"github.com/ckpt-dev/ckpt/checkpoint"
)

// Service syncs sessions; it commits through the checkpoint service it is given, and
// reaches the store and its configuration through it.
type Service struct {
	cp *checkpoint.Service
}

// New returns a Service over cp.
func New(cp *checkpoint.Service) *Service { return &Service{cp: cp} }

func names(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }
