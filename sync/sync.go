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
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/repo"
)

// Service carries what every operation needs: the commit path, and through it the store and
// its configuration.
type Service struct {
	*checkpoint.Service
}

// New returns a Service.
func New(st *repo.Store, cfg *config.Config) *Service {
	s := &Service{checkpoint.New(st, cfg)}
	s.Service.FinishPull = s.FinishPull
	return s
}

func names(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }
