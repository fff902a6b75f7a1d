package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/internal/home"
	"github.com/ckpt-dev/ckpt/repo"
)

func trackCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "track",
		Usage:     "version a directory of Markdown memory files that an agent writes",
		ArgsUsage: "[DIR]",
		Description: `Makes DIR a session with the free template: every *.md file in it is committed as
it is, with whatever sections it has (parsed for log, diff and merge; none required).
The git directory stays in the store, so nothing but the agent's files is in DIR. The
session is bound to the current project: its git hooks, its Claude Code hooks (Stop,
SessionEnd, PreCompact) and cron ticks commit it; a deleted file is a commit too, never a
loss. push and pull carry it between machines, merging a file edited on both section by
section. --claude tracks this project's Claude Code memory directory,
~/.claude/projects/<project>/memory (MEMORY.md and its topic files). The session is
named after the directory (claude-memory for --claude) unless -s names it.

Examples:
  ckpt track --claude
  ckpt track ~/.codex/memories -s codex-memories
  ckpt track . -s notes   (a directory holding GEMINI.md or CLAUDE.md files)`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.BoolFlag{Name: "claude", Usage: "this project's Claude Code memory directory"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runTrack(c, env) },
	}
}

func runTrack(c *cli.Context, env *Env) error {
	if c.NArg() > 1 || (c.NArg() == 1) == c.Bool("claude") {
		return usageError("give a directory, or --claude")
	}
	cwd, err := env.Getwd()
	if err != nil {
		return err
	}
	project := ""
	if top := home.GitTop(cwd); top != "" {
		project = home.MainWorkTree(top)
	}
	dir, id := "", ""
	if c.Bool("claude") {
		if env.userHome() == "" {
			return usageError("--claude: $HOME is not set")
		}
		dir, id = hooks.ClaudeMemoryDir(home.Project(cwd), env.userHome()), "claude-memory"
	} else {
		dir = absIn(cwd, c.Args().First())
		id = string(hooks.ClaudeSessionID(filepath.Base(dir)))
	}
	if c.IsSet("session") || c.String("session") != "" {
		sid, err := sessionID(c)
		if err != nil {
			return err
		}
		id = string(sid)
	}
	sid, err := repo.ParseSessionID(id)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	if err := a.ensureHome(); err != nil {
		return err
	}
	r, h, err := hooks.NewRunner(a.svc, a.sync).Track(sid, dir, project)
	if err != nil {
		return err
	}
	files, err := r.WorkFiles()
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, sessionJSON{ID: r.ID, Path: r.Dir, Worktree: r.WorkDir, Template: r.Template(), Head: h.String(), Bound: project})
	}
	fmt.Fprintf(env.Stdout, "tracking %s as session %s: %d Markdown file(s) at %s\n", env.relPath(r.WorkDir), r.ID, len(files), repo.ShortHash(h))
	return nil
}
