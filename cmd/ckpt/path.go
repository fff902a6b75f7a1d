package main

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

func pathCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "path",
		Usage: "print where a session's checkpoint files live",
		Description: `Prints the session's work tree: the directory holding checkpoint.md and notes.md.
With --git-dir, prints the session repository instead (the same directory unless the
session was bound with --worktree).

Examples:
  $EDITOR "$(ckpt path -s alpha)/checkpoint.md"
  git -C "$(ckpt path -s alpha --git-dir)" log --oneline`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.BoolFlag{Name: "git-dir", Usage: "print the repository directory"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			a, err := open(c, env)
			if err != nil {
				return err
			}
			r, err := a.session(c)
			if err != nil {
				return err
			}
			if c.Bool("git-dir") {
				fmt.Fprintln(env.Stdout, r.Dir)
			} else {
				fmt.Fprintln(env.Stdout, r.WorkDir)
			}
			return nil
		},
	}
}
