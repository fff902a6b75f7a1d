package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/repo"
)

func sessionsCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "sessions",
		Usage: "list the sessions in the store; remove, archive or unbind one",
		Description: `Lists every session with its template, last checkpoint and work tree; archived ones
are marked. rm, archive and unbind retire a session (ckpt sessions rm --help).

Examples:
  ckpt sessions
  ckpt sessions --json | jq -r '.[].id'
  ckpt sessions archive -s old-experiment
  ckpt sessions rm -s 4f1c2a9e-empty --yes`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error { return runSessions(c, env) },
		Subcommands: []*cli.Command{
			{
				Name: "rm", Usage: "delete a session and its history from the store",
				Description: `Deletes the session's repository and its state. It asks first, unless --yes, and
refuses a session with history that no remote has (beyond its first commit) unless
--force: archive keeps it instead. A session bound to a directory with --worktree (or
ckpt track) loses only its git directory; the directory's files stay. A remote keeps its
copy, which a later pull brings back.

Examples:
  ckpt sessions rm -s 4f1c2a9e
  ckpt sessions rm -s scratch --yes --force`,
				Flags: []cli.Flag{
					sessionFlag(),
					&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "do not ask"},
					&cli.BoolFlag{Name: "force", Usage: "delete history no remote has"},
				},
				Action: func(c *cli.Context) error { return runSessionsRm(c, env) },
			},
			{
				Name: "archive", Usage: "retire a session, keeping its history",
				Description: `Keeps the session's history and files (log, show, search and push still see them)
but unbinds it: no tick, git hook or agent hook takes its checkpoints or names it again,
and a project's Claude Code conversations move on to a session of their own.

Example:
  ckpt sessions archive -s old-experiment`,
				Flags:  []cli.Flag{sessionFlag()},
				Action: func(c *cli.Context) error { return runSessionsVerb(c, env, "archive") },
			},
			{
				Name: "unbind", Usage: "stop following the git repository a session is bound to",
				Description: `Forgets the git work tree the session is bound to: its commits get no checkpoint and
no Ckpt-Checkpoint trailer for this session any more, and Claude Code hooks no longer
pick it as the project's session. Cron ticks still checkpoint it.

Example:
  ckpt sessions unbind -s alpha`,
				Flags:  []cli.Flag{sessionFlag()},
				Action: func(c *cli.Context) error { return runSessionsVerb(c, env, "unbind") },
			},
		},
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
	Bound    string `json:"bound,omitempty"`
	Archived bool   `json:"archived,omitempty"`
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
	st, err := hooks.LoadState(a.home)
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
		if ss := st.Sessions[r.ID]; ss != nil {
			s.Bound, s.Archived = ss.Bound, ss.Archived
		}
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
		note := ""
		if s.Archived {
			note = "  (archived)"
		}
		fmt.Fprintf(env.Stdout, "%-20s %-10s %s %s  %s%s\n", s.ID, s.Template, short, when, env.relPath(s.Worktree), note)
	}
	return nil
}

func runSessionsVerb(c *cli.Context, env *Env, verb string) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	if verb == "archive" {
		if err := hooks.Archive(a.home, r.ID); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "archived session %s: its history stays, no hook or tick takes its checkpoints\n", r.ID)
		return nil
	}
	was, err := hooks.Unbind(a.home, r.ID)
	if err != nil {
		return err
	}
	if was == "" {
		fmt.Fprintf(env.Stdout, "session %s was bound to no git repository\n", r.ID)
		return nil
	}
	fmt.Fprintf(env.Stdout, "unbound session %s from %s\n", r.ID, env.relPath(was))
	return nil
}

// errNotRemoved is a removal the user declined.
var errNotRemoved = errors.New("not removed")

func runSessionsRm(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	n, err := commitCount(r)
	if err != nil {
		return err
	}
	if n > 1 && !c.Bool("force") {
		pushed, err := a.remote.Pushed(r)
		if err != nil {
			return err
		}
		if !pushed {
			return hint.New(fmt.Errorf("session %s: %d commits that no remote has; not removed", r.ID, n), "push it first (ckpt push -s %s), keep it with ckpt sessions archive -s %s, or delete it anyway with --force", r.ID, r.ID)
		}
	}
	if !c.Bool("yes") {
		fmt.Fprintf(env.Stderr, "remove session %s (%d commits, %s)? [y/N] ", r.ID, n, env.relPath(r.Dir))
		line, _ := bufio.NewReader(env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return hint.New(fmt.Errorf("session %s: %w", r.ID, errNotRemoved), "--yes removes without asking")
		}
	}
	if err := hooks.NewRunner(a.svc, a.sync).RemoveSession(r); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "removed session %s\n", r.ID)
	return nil
}

// commitCount counts the commits of r's main history (first parents).
func commitCount(r *repo.Repo) (int, error) {
	head, err := r.Head()
	if err != nil || head == repo.ZeroHash {
		return 0, err
	}
	n := 0
	err = r.Log(head, func(repo.CommitInfo) bool { n++; return true })
	return n, err
}
