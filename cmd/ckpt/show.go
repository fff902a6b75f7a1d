package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
)

func showCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "show",
		Usage: "print a session file as it was at a revision",
		Description: `Prints a file of the session at REV (default HEAD), byte for byte, or only one of its
sections. REV is a full or abbreviated commit hash, HEAD, HEAD~N, rejected/N for a
rejected write, before-compact (the last commit before the newest full checkpoint: what
the checkpoint said before the last compaction), or a time (2026-04-01T22:00Z, RFC 3339,
or a date: the newest commit at or before it).

Examples:
  ckpt show -s alpha
  ckpt show -s alpha --rev HEAD~3 --section 🔑
  ckpt show -s alpha --rev rejected/1
  ckpt show -s alpha --rev before-compact --section 🔑
  ckpt show -s alpha --rev 2026-04-01T22:00Z
  ckpt show -s alpha --file notes.md`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "rev", Aliases: []string{"r"}, Value: "HEAD", Usage: "the revision `REV`"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: checkpoint.File, Usage: "the file `NAME`"},
			&cli.StringFlag{Name: "section", Usage: "only section `S`"},
		},
		Action: func(c *cli.Context) error { return runShow(c, env) },
	}
}

func runShow(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	shown, err := a.history().Show(r.ID, c.String("rev"), c.String("file"), c.String("section"))
	if err != nil {
		return sectionError(err)
	}
	_, err = io.WriteString(env.Stdout, shown.Content)
	return err
}
