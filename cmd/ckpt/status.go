package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

func statusCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "sessions, pending notes, breakers, hooks and cron at a glance",
		Description: `For each session: the age of its last checkpoint, whether notes.md has entries waiting
for a full sync, its breaker, and the possible secrets no remote has yet (in history or
on disk: what would hold its push back); then whether the git hooks (of the current repository),
Claude Code hooks and cron are installed, and whether ckpt is on PATH.`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error { return runStatus(c, env) },
	}
}

type statusSession struct {
	ID             string      `json:"id"`
	Template       string      `json:"template"`
	LastCheckpoint string      `json:"last_checkpoint,omitempty"`
	AgeSeconds     int64       `json:"age_seconds"`
	PendingNotes   bool        `json:"pending_notes"`
	Bound          string      `json:"bound,omitempty"`
	Breaker        breakerJSON `json:"breaker"`
	// Secrets are possible secrets no remote has yet, in history or on disk: what would hold
	// the session's push back.
	Secrets []ckptsync.SecretFinding `json:"secrets,omitempty"`
}

type statusJSON struct {
	Home     string          `json:"home"`
	Sessions []statusSession `json:"sessions"`
	// KnowledgeSecrets are the knowledge repository's, as Secrets are a session's.
	KnowledgeSecrets []ckptsync.SecretFinding `json:"knowledge_secrets,omitempty"`
	Hooks            hooksReport              `json:"hooks"`
}

func runStatus(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	st, err := hooks.LoadState(a.home)
	if err != nil {
		return err
	}
	ids, err := a.store.SessionIDs()
	if err != nil {
		return err
	}
	now := a.store.Opts.Now()
	out := statusJSON{Home: a.home, Sessions: []statusSession{}}
	for _, id := range ids {
		r, err := a.store.Open(id)
		if err != nil {
			return err
		}
		s := statusSession{ID: r.ID, Template: r.Template()}
		ss := st.Sessions[r.ID]
		if ss == nil {
			ss = &hooks.SessionState{}
		}
		s.Bound, s.Breaker = ss.Bound, toBreakerJSON(r.ID, ss.Breaker)
		if h, err := r.Head(); err == nil && h != repo.ZeroHash {
			if ci, err := r.CommitInfo(h); err == nil {
				s.LastCheckpoint = ci.When.UTC().Format(time.RFC3339)
				s.AgeSeconds = int64(now.Sub(ci.When).Seconds())
			}
		}
		if n, err := a.svc.PendingNotes(r); err == nil {
			s.PendingNotes = n > 0
		}
		if s.Secrets, err = a.svc.SecretFindings(r); err != nil {
			fmt.Fprintf(env.Stderr, "ckpt: warning: %s: secret scan: %v\n", r.ID, err)
		}
		out.Sessions = append(out.Sessions, s)
	}
	if k, err := a.store.OpenKnowledge(); err == nil {
		if out.KnowledgeSecrets, err = a.svc.SecretFindings(k); err != nil {
			fmt.Fprintf(env.Stderr, "ckpt: warning: knowledge: secret scan: %v\n", err)
		}
	}
	if p, err := exec.LookPath("ckpt"); err == nil {
		out.Hooks.Ckpt = p
	}
	cwd, _ := os.Getwd()
	if gitTop(cwd) != "" {
		out.Hooks.Git, _ = hooks.StatusGit(cwd)
	}
	out.Hooks.Claude = map[string][]string{}
	home, _ := os.UserHomeDir()
	for _, scope := range []string{"project", "local", "user"} {
		if path, err := hooks.ClaudeSettingsPath(scope, projectDir(cwd), home); err == nil {
			if ev, err := hooks.StatusClaude(path); err == nil && len(ev) > 0 {
				out.Hooks.Claude[path] = ev
			}
		}
	}
	if ct, err := a.crontab(); err == nil {
		line, ok, err := hooks.CronInstalled(ct, a.home)
		cs := &cronStatus{Installed: ok, Line: line}
		if err != nil {
			cs.Error = err.Error()
		}
		out.Hooks.Cron = cs
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, out)
	}
	w := env.Stdout
	fmt.Fprintf(w, "store %s\n", relPath(a.home))
	for _, s := range out.Sessions {
		age := "never"
		if s.LastCheckpoint != "" {
			age = time.Duration(s.AgeSeconds*int64(time.Second)).String() + " ago"
		}
		notes := "no pending notes"
		if s.PendingNotes {
			notes = "notes pending"
		}
		breaker := "breaker closed"
		if s.Breaker.Open {
			breaker = "BREAKER OPEN: " + s.Breaker.Reason
		}
		fmt.Fprintf(w, "  %-20s %-9s last checkpoint %s; %s; %s\n", s.ID, s.Template, age, notes, breaker)
		printStatusSecrets(w, s.Secrets, "ckpt redact -s "+s.ID)
	}
	if len(out.KnowledgeSecrets) > 0 {
		fmt.Fprintf(w, "  %-20s\n", "knowledge")
		printStatusSecrets(w, out.KnowledgeSecrets, "ckpt redact --knowledge")
	}
	installed := func(ok bool) string {
		if ok {
			return "installed"
		}
		return "not installed"
	}
	gitOK := len(out.Hooks.Git) > 0
	for _, h := range out.Hooks.Git {
		gitOK = gitOK && h.Installed
	}
	fmt.Fprintf(w, "git hooks   %s\n", installed(gitOK))
	fmt.Fprintf(w, "claude      %s\n", installed(len(out.Hooks.Claude) > 0))
	fmt.Fprintf(w, "cron        %s\n", installed(out.Hooks.Cron != nil && out.Hooks.Cron.Installed))
	if out.Hooks.Ckpt == "" {
		fmt.Fprintln(w, "ckpt        not on PATH: installed hooks will skip checkpoints")
	}
	return nil
}

// printStatusSecrets lists a repository's findings under its status line, with the way out.
func printStatusSecrets(w io.Writer, fs []ckptsync.SecretFinding, redact string) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "    %d possible secret(s) not pushed yet; a push holds them back (%s)\n", len(fs), redact)
	for _, f := range fs {
		where := "on disk"
		if f.Commit != "" {
			where = "commit " + f.Commit
		}
		fmt.Fprintf(w, "      %s:%d: %s: %s (%s)\n", f.File, f.Line, f.Rule, f.Secret, where)
	}
}
