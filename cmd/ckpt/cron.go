package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"

	"github.com/ckpt-dev/ckpt/repo"
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
				Flags:  []cli.Flag{&cli.DurationFlag{Name: "every", Value: defaultEvery, Usage: "how often to tick: 1m…60m dividing an hour, or whole hours"}, jsonFlag()},
				Action: func(c *cli.Context) error { return runCronVerb(c, env, "install") },
			},
			{
				Name: "uninstall", Usage: "remove ckpt's line from your crontab",
				Flags:  []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error { return runCronVerb(c, env, "uninstall") },
			},
			{
				Name: "tick", Usage: "take the checkpoints that are due, once",
				Flags:  []cli.Flag{jsonFlag()},
				Action: func(c *cli.Context) error { return runTick(c, env) },
			},
		},
	}
}

func runCronVerb(c *cli.Context, env *Env, verb string) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	st, err := a.cron(c, verb)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, st)
	}
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

// crontab is the user's crontab through the crontab command ($CKPT_CRONTAB names another).
func (a *app) crontab() (hooks.Crontab, error) {
	path := a.env.Getenv("CKPT_CRONTAB")
	if path == "" {
		p, err := exec.LookPath("crontab")
		if err != nil {
			return nil, errNoCrontab
		}
		path = p
	}
	return hooks.SystemCrontab(path), nil
}

// cron installs, removes or inspects ckpt's crontab line. Without a crontab command,
// install prints the line and a systemd timer to set up by hand.
func (a *app) cron(c *cli.Context, verb string) (*cronStatus, error) {
	if err := os.MkdirAll(a.home, repo.DirPerm); err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	if p, err := filepath.EvalSymlinks(exe); err == nil {
		exe = p
	}
	every := defaultEvery
	if c.IsSet("every") {
		every = c.Duration("every")
	}
	line, err := hooks.CronLine(every, exe, a.home)
	if err != nil && verb == "install" {
		return nil, &exitError{exitUsage, err}
	}
	ct, err := a.crontab()
	if errors.Is(err, errNoCrontab) {
		st := &cronStatus{Error: "no crontab command on this machine; add this line to your scheduler, or use the systemd units below"}
		if verb == "install" {
			svc, timer, uerr := hooks.SystemdUnits(every, exe, a.home)
			if uerr != nil {
				return nil, uerr
			}
			fmt.Fprintf(a.env.Stdout, "%s\n\n# ~/.config/systemd/user/ckpt-tick.service\n%s\n# ~/.config/systemd/user/ckpt-tick.timer\n%s\n# then: systemctl --user enable --now ckpt-tick.timer\n", line, svc, timer)
		}
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	switch verb {
	case "install":
		if _, err := hooks.InstallCron(ct, line); err != nil {
			return nil, err
		}
	case "uninstall":
		if _, err := hooks.UninstallCron(ct, a.home); err != nil {
			return nil, err
		}
	}
	got, ok, err := hooks.CronInstalled(ct, a.home)
	if err != nil {
		return nil, err
	}
	return &cronStatus{Installed: ok, Line: got}, nil
}

func runTick(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	outs, ran, err := hooks.NewRunner(a.svc).Tick()
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
