package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/internal/home"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

func initCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "create a session repository and its first commit",
		Description: `Creates sessions/ID in the store: a git repository whose work tree holds checkpoint.md
and notes.md rendered from the template, and commits them.

With --worktree DIR the work tree is DIR, a directory a harness already writes: its
existing checkpoint.md and notes.md are committed as they are; the git directory stays in
the store, so nothing but the checkpoint files appears in DIR.

Examples:
  ckpt init -s alpha
  ckpt init -s research --template eleven
  ckpt init -s bot --worktree ~/.openclaw/sessions/bot`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Value: templates.Default, Usage: "checkpoint template: six, eleven, eleven-en or a NAME in <home>/templates"},
			&cli.StringFlag{Name: "worktree", Usage: "bind the session to this existing `DIR`"},
			&cli.StringFlag{Name: "repo", Usage: "the git work tree `DIR` whose hooks checkpoint this session (default: the one around the current directory)"},
			&cli.StringFlag{Name: "transcript", Usage: "the agent transcript `FILE` the session follows (for sync, hooks and cron)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runInit(c, env) },
	}
}

func runInit(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	id, err := sessionID(c)
	if err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	name := c.String("template")
	t, err := templates.Load(a.home, name)
	if err != nil {
		return &exitError{exitUsage, hint.New(err, "ckpt templates lists them")}
	}
	if t.Kind != templates.KindCheckpoint {
		return usageError("template %s is a %s template, not a checkpoint template", name, t.Kind)
	}
	if err := a.ensureHome(); err != nil {
		return err
	}
	cwd, err := env.Getwd()
	if err != nil {
		return err
	}
	bound := ""
	if top := home.GitTop(cwd); top != "" {
		bound = home.MainWorkTree(top) // a linked worktree's commits are its repository's
	}
	if c.String("repo") != "" {
		bound = absIn(cwd, c.String("repo"))
	}
	transcript := c.String("transcript")
	if transcript != "" {
		transcript = absIn(cwd, transcript)
	}
	extra := map[string]string{}
	if bound != "" {
		extra["repo"] = bound
	}
	r, h, err := a.svc.InitSession(id, name, c.String("worktree"), extra)
	if err != nil {
		return err
	}
	if err := hooks.NewRunner(a.svc, a.sync).Bind(r, bound, transcript); err != nil {
		return fmt.Errorf("session %s created, but recording it for the hooks failed: %w", r.ID, err)
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, sessionJSON{ID: r.ID, Path: r.Dir, Worktree: r.WorkDir, Template: name, Head: h.String()})
	}
	fmt.Fprintf(env.Stdout, "created session %s (template %s) in %s at %s\n", r.ID, name, env.relPath(r.WorkDir), repo.ShortHash(h))
	return nil
}
