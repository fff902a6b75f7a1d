package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/status"
)

func statusCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "sessions, pending notes, breakers, hooks and cron at a glance",
		Description: `For each session: the age of its last checkpoint, whether notes.md has entries waiting
for a full sync, whether the checkpoint on disk passes check (the next checkpoint taken
would be rejected), its breaker, and the possible secrets no remote has yet (in history
or on disk: what would hold its push back); then whether the git hooks (of the current
repository), Claude Code hooks and cron are installed, when cron last ticked, and whether
ckpt is on PATH.

Examples:
  ckpt status
  ckpt status --json | jq '.sessions[] | select(.pending_notes) | .id'`,
		Flags:  []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error { return runStatus(c, env) },
	}
}

func runStatus(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	w := status.Where{UserHome: env.userHome(), Crontab: a.crontab()}
	w.Cwd, _ = env.Getwd()
	w.Ckpt, _ = env.LookPath("ckpt")
	out, err := status.Collect(a.svc, a.sync, a.remote, w)
	if err != nil {
		return err
	}
	for _, msg := range out.Warnings {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s\n", msg)
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, out)
	}
	printStatus(env, out)
	return nil
}

func printStatus(env *Env, out status.Report) {
	w := env.Stdout
	fmt.Fprintf(w, "store %s\n", env.relPath(out.Home))
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
		if s.Archived {
			breaker = "archived"
		}
		fmt.Fprintf(w, "  %-20s %-9s last checkpoint %s; %s; %s\n", s.ID, s.Template, age, notes, breaker)
		if n := len(s.Invalid); n > 0 {
			more := ""
			if n > 1 {
				more = fmt.Sprintf(" (and %d more)", n-1)
			}
			fmt.Fprintf(w, "    INVALID checkpoint on disk, the next one taken will be rejected: %s%s (ckpt check -s %s)\n", s.Invalid[0], more, s.ID)
		}
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
	tick := "never ticked"
	if t := out.LastTick; t != nil {
		tick = fmt.Sprintf("last tick %s ago, %d checkpoint(s)", time.Duration(out.LastTickAgeSeconds*int64(time.Second)), t.Checkpoints)
	}
	fmt.Fprintf(w, "cron        %s; %s\n", installed(out.Hooks.Cron != nil && out.Hooks.Cron.Installed), tick)
	if out.Hooks.Ckpt == "" {
		fmt.Fprintln(w, "ckpt        not on PATH: installed hooks will skip checkpoints")
	}
}

// printStatusSecrets lists a repository's findings under its status line, with the way out.
func printStatusSecrets(w io.Writer, fs []remote.SecretFinding, redact string) {
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
