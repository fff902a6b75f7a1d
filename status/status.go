// Package status gathers what ckpt status shows: for each session the age of its last
// checkpoint, whether notes wait for a full sync, whether the checkpoint on disk passes
// check, its breaker and the possible secrets no remote has yet; then which hooks are
// installed and when cron last ticked. It reads, never writes (but for the secret scan's
// cache).
package status

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/home"
	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
	"github.com/ckpt-dev/ckpt/templates"
)

// Session is one session's line of the status.
type Session struct {
	ID             string `json:"id"`
	Template       string `json:"template"`
	LastCheckpoint string `json:"last_checkpoint,omitempty"`
	AgeSeconds     int64  `json:"age_seconds"`
	PendingNotes   bool   `json:"pending_notes"`
	// Invalid are the errors check finds in the checkpoint on disk: the next checkpoint a
	// hook or tick takes would be rejected until they are fixed.
	Invalid  []string            `json:"invalid,omitempty"`
	Archived bool                `json:"archived,omitempty"`
	Bound    string              `json:"bound,omitempty"`
	Breaker  hooks.BreakerReport `json:"breaker"`
	// Secrets are possible secrets no remote has yet, in history or on disk: what would hold
	// the session's push back.
	Secrets []remote.SecretFinding `json:"secrets,omitempty"`
}

// Report is the whole status.
type Report struct {
	Home     string    `json:"home"`
	Sessions []Session `json:"sessions"`
	// KnowledgeSecrets are the knowledge repository's, as Secrets are a session's.
	KnowledgeSecrets []remote.SecretFinding `json:"knowledge_secrets,omitempty"`
	// KnowledgeUncommitted are the knowledge work tree's files whose bytes differ from its
	// last commit (a sync killed between writing MEMORY.md and committing it, or a hand
	// edit): no push carries them until they are committed.
	KnowledgeUncommitted []string     `json:"knowledge_uncommitted,omitempty"`
	Hooks                hooks.Report `json:"hooks"`
	// LastTick is the last cron tick, nil when none ran.
	LastTick           *hooks.TickRecord `json:"last_tick,omitempty"`
	LastTickAgeSeconds int64             `json:"last_tick_age_seconds,omitempty"`
	// Warnings say what could not be read (a secret scan that failed).
	Warnings []string `json:"-"`
}

// Where says where the hooks that status reports are looked for.
type Where struct {
	Cwd      string        // the working directory: its git work tree's hooks
	UserHome string        // the user's Claude Code settings
	Ckpt     string        // the ckpt on PATH, "" if none
	Crontab  hooks.Crontab // the user's crontab; nil when there is none
}

// Collect gathers the status of the store of cp.
func Collect(cp *checkpoint.Service, sy *ckptsync.Service, rm *remote.Service, w Where) (Report, error) {
	st := cp.Store
	out := Report{Home: st.Home, Sessions: []Session{}}
	state, err := hooks.LoadState(st.Home)
	if err != nil {
		return out, err
	}
	ids, err := st.SessionIDs()
	if err != nil {
		return out, err
	}
	now := st.Opts.Now()
	for _, id := range ids {
		r, err := st.Open(id)
		if err != nil {
			return out, err
		}
		s := Session{ID: r.ID, Template: r.Template()}
		ss := state.Sessions[r.ID]
		if ss == nil {
			ss = &hooks.SessionState{}
		}
		s.Bound, s.Breaker, s.Archived = ss.Bound, ss.Breaker.Report(r.ID), ss.Archived
		s.Invalid = invalid(cp, r)
		if h, err := r.Head(); err == nil && h != repo.ZeroHash {
			if ci, err := r.CommitInfo(h); err == nil {
				s.LastCheckpoint = ci.When.UTC().Format(time.RFC3339)
				s.AgeSeconds = int64(now.Sub(ci.When).Seconds())
			}
		}
		if n, err := sy.PendingNotes(r); err == nil {
			s.PendingNotes = n > 0
		}
		if s.Secrets, err = rm.SecretFindings(r); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s: secret scan: %v", r.ID, err))
		}
		out.Sessions = append(out.Sessions, s)
	}
	if k, err := st.OpenKnowledge(); err == nil {
		if out.KnowledgeSecrets, err = rm.SecretFindings(k); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("knowledge: secret scan: %v", err))
		}
		if out.KnowledgeUncommitted, err = uncommitted(k); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("knowledge: %v", err))
		}
	}
	out.Hooks = installed(st.Home, w)
	if t, err := hooks.LastTick(st.Home); err == nil && t != nil {
		out.LastTick, out.LastTickAgeSeconds = t, int64(now.Sub(t.Time).Seconds())
	}
	return out, nil
}

// uncommitted lists r's work-tree files whose bytes differ from its last commit, sorted
// (a committed file missing from disk is not listed). It reads without the lock, as all of
// status does: a sync in the middle of its writes may show for a moment.
func uncommitted(r *repo.Repo) ([]string, error) {
	h, err := r.Head()
	if err != nil || h == repo.ZeroHash {
		return nil, err
	}
	old, err := r.Files(h)
	if err != nil {
		return nil, err
	}
	disk, err := r.WorkFiles()
	if err != nil {
		return nil, err
	}
	var out []string
	for name, b := range disk {
		if ob, ok := old[name]; !ok || !bytes.Equal(ob, b) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// invalid checks the checkpoint on disk as a commit would, and returns its errors.
func invalid(cp *checkpoint.Service, r *repo.Repo) []string {
	t, err := cp.LoadTemplate(r.Template())
	if err != nil || t.Kind == templates.KindFree {
		return nil
	}
	b, err := r.ReadWorkFile(checkpoint.File)
	if err != nil {
		return []string{err.Error()}
	}
	_, fs := cp.Check(t, b, checkpoint.CheckOptions{})
	var out []string
	for _, f := range fs {
		if f.Severity == sections.Error {
			out = append(out, fmt.Sprintf("%s:%d: %s", checkpoint.File, f.Line, f.Message))
		}
	}
	return out
}

// installed is what status says of the hooks: the git hooks of the work tree around the
// working directory, the Claude Code settings that hold ckpt's hooks, the crontab line.
// What cannot be read counts as not installed.
func installed(store string, w Where) hooks.Report {
	rep := hooks.Report{Ckpt: w.Ckpt, Claude: map[string][]string{}}
	if home.GitTop(w.Cwd) != "" {
		rep.Git, _ = hooks.StatusGit(w.Cwd)
	}
	for _, scope := range hooks.ClaudeScopes {
		if path, err := hooks.ClaudeSettingsPath(scope, hooks.ProjectDir(w.Cwd), w.UserHome); err == nil {
			if ev, err := hooks.StatusClaude(path); err == nil && len(ev) > 0 {
				rep.Claude[path] = ev
			}
		}
	}
	if w.Crontab != nil {
		line, ok, err := hooks.CronInstalled(w.Crontab, store)
		cs := &hooks.CronStatus{Installed: ok, Line: line}
		if err != nil {
			cs.Error = err.Error()
		}
		rep.Cron = cs
	}
	return rep
}
