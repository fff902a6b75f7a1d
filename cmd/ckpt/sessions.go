package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/repo"
)

func sessionsCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list the sessions in the store",
		Description: `Lists every session with its template, last checkpoint and work tree.

Examples:
  ckpt sessions
  ckpt sessions --json | jq -r '.[].id'`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error { return runSessions(c, env) },
	}
}

type sessionJSON struct {
	ID       string `json:"id"`
	Path     string `json:"path"`
	Worktree string `json:"worktree"`
	Template string `json:"template"`
	Head     string `json:"head"`
	Time     string `json:"time,omitempty"`
	Subject  string `json:"subject,omitempty"`
}

func runSessions(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	ids, err := a.store.SessionIDs()
	if err != nil {
		return err
	}
	out := make([]sessionJSON, 0, len(ids))
	for _, id := range ids {
		r, err := a.store.Open(id)
		if err != nil {
			return err
		}
		s := sessionJSON{ID: r.ID, Path: r.Dir, Worktree: r.WorkDir, Template: r.Template()}
		if h, err := r.Head(); err == nil && h != repo.ZeroHash {
			s.Head = h.String()
			if ci, err := r.CommitInfo(h); err == nil {
				s.Time = ci.When.UTC().Format(time.RFC3339)
				s.Subject = ci.Subject
			}
		}
		out = append(out, s)
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(env.Stderr, "no sessions in %s\nckpt: hint: ckpt init -s ID creates one\n", a.home)
		return nil
	}
	for _, s := range out {
		when := ""
		if t, err := time.Parse(time.RFC3339, s.Time); err == nil {
			when = t.Local().Format("2006-01-02 15:04")
		}
		short := ""
		if len(s.Head) >= 7 {
			short = s.Head[:7]
		}
		fmt.Fprintf(env.Stdout, "%-20s %-10s %s %s  %s\n", s.ID, s.Template, short, when, env.relPath(s.Worktree))
	}
	return nil
}
