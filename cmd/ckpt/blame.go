package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/internal/hint"
)

func blameCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "blame",
		Usage: "say which checkpoint added each line of a section",
		Description: `For each line of a section of checkpoint.md at REV (default HEAD), prints the commit
that added it, its time and trigger: when a decision was taken, when a blocker appeared.
Blank lines, the heading and the italic directive line are left out. A line that a full
checkpoint (a compaction) added is marked "full". The section is an id (🎯, §3), its
number, or the heading text; REV is what ckpt show takes (a hash, HEAD~N,
before-compact, a time).

Examples:
  ckpt blame -s alpha --section 🔑
  ckpt blame -s alpha --section "Key Decisions" --rev before-compact
  ckpt blame -s alpha --section 10 --json | jq -r '.lines[] | .short + " " + .text'`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "section", Usage: "the section `S` (required)"},
			&cli.StringFlag{Name: "rev", Aliases: []string{"r"}, Value: "HEAD", Usage: "the revision `REV`"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runBlame(c, env) },
	}
}

func runBlame(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.String("section") == "" {
		return hint.New(usageError("no section given"), "ckpt blame -s ID --section S (an id such as 🔑 or §3, its number, or the heading text)")
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	res, err := a.history().Blame(r.ID, c.String("section"), c.String("rev"))
	if err != nil {
		return sectionError(err)
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, res)
	}
	p := env.palette()
	for _, l := range res.Lines {
		kind := l.Trigger
		if l.Full && kind != "full" {
			kind += ",full"
		}
		fmt.Fprintf(env.Stdout, "%s%s%s %s %-12s %4d  %s\n", p.yellow, l.Short, p.reset, l.Time.Local().Format("2006-01-02 15:04"), kind, l.Line, l.Text)
	}
	return nil
}
