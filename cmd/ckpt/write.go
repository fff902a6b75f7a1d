package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

func writeCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "write",
		Usage:     "replace a session file with standard input, check it, commit it",
		ArgsUsage: "< CONTENT",
		Description: `Reads the new content of a session file from standard input. For checkpoint.md, ckpt
updates _last_updated_ (and fills an empty _session_id_), checks the result against the
session's template, writes it atomically and commits it. Content equal to the last
commit makes no commit and exits 0.

A checkpoint that fails check is not written and not committed: the messages go to
standard error, the bytes are kept under refs/ckpt/rejected/N (ckpt log --rejected),
and ckpt exits 3.

Examples:
  agent-writes-checkpoint | ckpt write -s alpha
  ckpt write -s alpha --file notes.md < notes.md`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: ckptsync.CheckpointFile, Usage: "the session file to write: checkpoint.md, notes.md or checkpoint-<topic>.md"},
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "describe the change in the commit subject"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runWrite(c, env) },
	}
}

func runWrite(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	name := c.String("file")
	if err := ckptsync.ValidSessionFile(name); err != nil {
		return err
	}
	content, err := io.ReadAll(env.Stdin)
	if err != nil {
		return fmt.Errorf("read standard input: %w", err)
	}
	res, err := a.svc.Write(r, name, content, ckptsync.CommitOptions{Trigger: "write", Message: c.String("message")})
	return a.reportCommit(c, r, res, err)
}
