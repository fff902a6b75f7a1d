package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/hint"
)

// defaultEvery is how often cron ticks unless told otherwise.
const defaultEvery = 15 * time.Minute

func cronCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "cron",
		Usage: "checkpoint every session on a schedule",
		Description: `ckpt cron tick decides for each session, from file sizes and times only: a full
checkpoint when notes.md has entries, when the transcript grew by full.tokens (20,000,
counted as characters/4) since the last full one, or after full.every (10) sparse ones;
a sparse checkpoint when the transcript grew; nothing otherwise. Ticks never overlap (a
second one exits 0 at once), and every action leaves a receipt in state/ticks.jsonl. A
session whose checkpoints failed breaker.failures (3) times in a row gets sparse ones
only until ckpt breaker reset.

Examples:
  ckpt cron install --every 15m
  ckpt cron tick
  ckpt cron uninstall`,
		Subcommands: []*cli.Command{
			{
				Name: "install", Usage: "add ckpt's line to your crontab (or print a systemd timer)",
				Description: `Adds (or replaces) this store's line in your crontab; every other line stays.
Without a crontab command, prints the line and systemd units to set up by hand.

Examples:
  ckpt cron install
  ckpt cron install --every 1h`,
				Flags:  []cli.Flag{&cli.DurationFlag{Name: "every", Value: defaultEvery, Usage: "how often to tick: 1m…60m dividing an hour, or whole hours"}, jsonFlag()},
				Action: func(c *cli.Context) error { return runCronVerb(c, env, hooks.Install) },
			},
			{
				Name: "uninstall", Usage: "remove ckpt's line from your crontab",
				Description: `Removes this store's line from your crontab; every other line stays.

Example:
  ckpt cron uninstall`,
				Flags:  []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error { return runCronVerb(c, env, hooks.Uninstall) },
			},
			{
				Name: "tick", Usage: "take the checkpoints that are due, once",
				Description: `What the cron line runs: for each session, the checkpoint that is due (full,
sparse or none), one line each.

Examples:
  ckpt cron tick
  ckpt cron tick --json`,
				Flags:  []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error { return runTick(c, env) },
			},
		},
	}
}

func runCronVerb(c *cli.Context, env *Env, verb hooks.Verb) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	setup, err := a.cronSetup(c, verb)
	if err != nil {
		return err
	}
	st, err := hooks.ApplyCron(verb, setup)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, st)
	}
	fmt.Fprint(env.Stdout, st.Units)
	switch {
	case st.Error != "":
		fmt.Fprintln(env.Stderr, "ckpt: "+st.Error)
	case st.Installed:
		fmt.Fprintln(env.Stdout, "cron installed: "+st.Line)
	default:
		fmt.Fprintln(env.Stdout, "cron not installed")
	}
	return nil
}

// cronSetup is what installing ckpt's cron line takes: the line, for this ckpt and store,
// and the user's crontab.
func (a *app) cronSetup(c *cli.Context, verb hooks.Verb) (hooks.CronSetup, error) {
	s := hooks.CronSetup{Home: a.home, Every: defaultEvery}
	if verb == hooks.Install && !a.exists() {
		return s, hint.New(fmt.Errorf("%s: no store here: a cron line would tick nothing", a.home), "create one first (ckpt init -s ID, or ckpt hooks install --claude), or name one with --home")
	}
	exe, err := os.Executable()
	if err != nil {
		return s, err
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	s.Ckpt = exe
	if c.IsSet("every") {
		s.Every = c.Duration("every")
	}
	if s.Line, err = hooks.CronLine(s.Every, exe, a.home); err != nil && verb == hooks.Install {
		return s, &exitError{exitUsage, err}
	}
	s.Crontab = a.crontab()
	return s, nil
}

// crontab is the user's crontab through the crontab command ($CKPT_CRONTAB names another);
// nil when there is no such command.
func (a *app) crontab() hooks.Crontab {
	path := a.env.Getenv("CKPT_CRONTAB")
	if path == "" {
		path, _ = a.env.LookPath("crontab")
	}
	if path == "" {
		return nil
	}
	return hooks.SystemCrontab(path)
}

func runTick(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	if !a.exists() {
		return nil // no store, nothing to tick; and none is made
	}
	outs, ran, err := hooks.NewRunner(a.svc, a.sync).Tick()
	if err != nil {
		return err
	}
	if !ran {
		fmt.Fprintln(env.Stderr, "ckpt: another tick is running; this one does nothing")
		return nil
	}
	if c.Bool("json") {
		if outs == nil {
			outs = []hooks.Outcome{}
		}
		return printJSON(env.Stdout, outs)
	}
	printOutcomes(env, outs)
	return nil
}

// printOutcomes says what a tick or hook did, one line per session.
func printOutcomes(env *Env, outs []hooks.Outcome) {
	for _, o := range outs {
		line := fmt.Sprintf("%s: %s (%s): %s", o.Session, o.Action, o.Reason, o.Result)
		if o.Commit != "" {
			line += " " + o.Commit[:7]
		}
		if o.Error != "" {
			line += ": " + o.Error
		}
		if o.Tripped {
			line += "; breaker open: only sparse checkpoints until ckpt breaker reset -s " + o.Session
		}
		fmt.Fprintln(env.Stdout, line)
	}
}
