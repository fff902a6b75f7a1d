package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
)

func showCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "show",
		Usage: "print a session file as it was at a revision",
		Description: `Prints a file of the session at REV (default HEAD), byte for byte, or only one of its
sections. REV is a full or abbreviated commit hash, HEAD, HEAD~N, or rejected/N for a
rejected write.

Examples:
  ckpt show -s alpha
  ckpt show -s alpha --rev HEAD~3 --section 🔑
  ckpt show -s alpha --rev rejected/1
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
	unlock, err := a.readLock(r)
	if err != nil {
		return err
	}
	defer unlock()
	h, err := r.Resolve(c.String("rev"))
	if err != nil {
		return err
	}
	b, err := r.ReadFile(h, c.String("file"))
	if err != nil {
		return err
	}
	if q := c.String("section"); q != "" {
		t, err := a.svc.LoadTemplate(r.Template())
		if err != nil {
			return err
		}
		s := t.Parse(b).Find(q)
		if s == nil {
			return fmt.Errorf("%s at %s: no section %q", c.String("file"), repo.ShortHash(h), q)
		}
		b = s.Bytes()
	}
	_, err = env.Stdout.Write(b)
	return err
}
