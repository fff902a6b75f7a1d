package main

import (
	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
)

func restoreCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "restore",
		Usage: "bring back a session's files, or one section, from a revision",
		Description: `Makes a new commit whose files are those of REV; with --section, only that section of
checkpoint.md is taken from REV and the rest stays as it is now. History is never
rewritten: the restore is itself a checkpoint you can undo the same way.

Examples:
  ckpt restore -s alpha --rev HEAD~1
  ckpt restore -s alpha --rev 3f2a9c1 --section "Key Decisions"`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "rev", Aliases: []string{"r"}, Required: true, Usage: "the revision `REV` to restore from"},
			&cli.StringFlag{Name: "section", Usage: "restore only section `S`"},
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "describe the change in the commit subject"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runRestore(c, env) },
	}
}

func runRestore(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	if s := c.String("section"); s != "" {
		if _, err := a.resolveSection(r, s); err != nil {
			return err
		}
	}
	res, err := a.svc.Restore(r, c.String("rev"), c.String("section"), checkpoint.CommitOptions{Trigger: checkpoint.TriggerRestore, Message: c.String("message")})
	return a.reportCommit(c, r, res, err)
}
