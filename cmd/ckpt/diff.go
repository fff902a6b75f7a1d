package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/sections"
)

func diffCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "compare two checkpoints section by section",
		Description: `Says for each section whether it was added, removed, changed or moved between two
revisions, and prints a unified diff of each changed section. --to defaults to HEAD and
--from to the parent of --to. A revision is what ckpt show takes: a hash, HEAD~N,
before-compact, or a time.

Examples:
  ckpt diff -s alpha
  ckpt diff -s alpha --from HEAD~5 --section 📋
  ckpt diff -s alpha --from before-compact
  ckpt diff -s alpha --json | jq '.[] | select(.status=="changed") | .section'`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "from", Usage: "older revision `REV` (default: the parent of --to)"},
			&cli.StringFlag{Name: "to", Value: "HEAD", Usage: "newer revision `REV`"},
			&cli.StringFlag{Name: "section", Usage: "only section `S`"},
			&cli.StringFlag{Name: "file", Aliases: []string{"f"}, Value: checkpoint.File, Usage: "the file `NAME` to compare"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runDiff(c, env) },
	}
}

func runDiff(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	res, err := a.history().Diff(r.ID, history.DiffQuery{From: c.String("from"), To: c.String("to"), Section: c.String("section"), File: c.String("file")})
	if err != nil {
		return sectionError(err)
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, res.Changes)
	}
	p := env.palette()
	for _, ch := range res.Changes {
		status := ch.Status
		if ch.Moved && ch.Status == string(sections.Changed) {
			status = "changed and moved"
		}
		fmt.Fprintf(env.Stdout, "%s%s %s%s\n", p.bold, status, ch.Heading, p.reset)
		for _, l := range strings.SplitAfter(ch.Diff, "\n") {
			if l == "" {
				continue
			}
			color := ""
			switch {
			case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
				color = p.bold
			case strings.HasPrefix(l, "+"):
				color = p.green
			case strings.HasPrefix(l, "-"):
				color = p.red
			case strings.HasPrefix(l, "@@"):
				color = p.cyan
			}
			if color != "" {
				l = color + strings.TrimSuffix(l, "\n") + p.reset + "\n"
			}
			fmt.Fprint(env.Stdout, l)
		}
	}
	return nil
}
