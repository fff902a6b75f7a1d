package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
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
and ckpt exits 3. Check includes the shrink guard: dropping a Key Decision or more than
half of another section's entries is an error unless they moved to a spill file or were
marked superseded; --allow-shrink accepts it.

Uncommitted bytes already in the work tree (an entry appended to notes.md, a checkpoint a
harness wrote) are committed first as they are (checkpoint(autosave)), never overwritten.

Examples:
  agent-writes-checkpoint | ckpt write -s alpha
  ckpt write -s alpha --file notes.md < notes.md
  ckpt write -s alpha --allow-shrink < pruned-checkpoint.md`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: checkpoint.File, Usage: "the session file to write: checkpoint.md, notes.md or checkpoint-<topic>.md"},
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "describe the change in the commit subject"},
			allowShrinkFlag(),
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
	if err := checkpoint.ValidSessionFile(name); err != nil {
		return err
	}
	content, err := io.ReadAll(env.Stdin)
	if err != nil {
		return fmt.Errorf("read standard input: %w", err)
	}
	res, err := a.svc.Write(r, name, content, checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite, Message: c.String("message"), AllowShrink: c.Bool("allow-shrink")})
	return a.reportCommit(c, r, res, err)
}
