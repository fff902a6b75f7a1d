package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

func diffCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "diff",
		Usage: "compare two checkpoints section by section",
		Description: `Says for each section whether it was added, removed, changed or moved between two
revisions, and prints a unified diff of each changed section. --to defaults to HEAD and
--from to the parent of --to.

Examples:
  ckpt diff -s alpha
  ckpt diff -s alpha --from HEAD~5 --section 📋
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

type diffJSON struct {
	Section string `json:"section"`
	Heading string `json:"heading"`
	Status  string `json:"status"`
	Moved   bool   `json:"moved"`
	Diff    string `json:"diff"`
}

func runDiff(c *cli.Context, env *Env) error {
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
	to, err := r.Resolve(c.String("to"))
	if err != nil {
		return err
	}
	from := repo.ZeroHash
	if c.IsSet("from") {
		if from, err = r.Resolve(c.String("from")); err != nil {
			return err
		}
	} else {
		ci, err := r.CommitInfo(to)
		if err != nil {
			return err
		}
		if len(ci.Parents) > 0 {
			from = ci.Parents[0]
		}
	}
	file := c.String("file")
	newer, err := r.ReadFile(to, file)
	if err != nil {
		return err
	}
	var older []byte
	if from != repo.ZeroHash {
		if older, err = r.ReadFile(from, file); err != nil && !errors.Is(err, repo.ErrNoFile) {
			return err
		}
	}
	t, err := a.svc.LoadTemplate(r.Template())
	if err != nil {
		return err
	}
	changes := sections.Diff(t.Parse(older), t.Parse(newer))
	if q := c.String("section"); q != "" {
		id, err := a.resolveSection(r, q)
		if err != nil {
			return err
		}
		var keep []sections.Change
		for _, ch := range changes {
			if ch.ID == id {
				keep = append(keep, ch)
			}
		}
		changes = keep
	}
	if c.Bool("json") {
		out := make([]diffJSON, 0, len(changes))
		for _, ch := range changes {
			d := ""
			if ch.Status != sections.Moved {
				d = ch.Unified()
			}
			out = append(out, diffJSON{string(ch.ID), ch.Heading, string(ch.Status), ch.Moved, d})
		}
		return printJSON(env.Stdout, out)
	}
	p := env.palette()
	for _, ch := range changes {
		status := string(ch.Status)
		if ch.Moved && ch.Status == sections.Changed {
			status = "changed and moved"
		}
		fmt.Fprintf(env.Stdout, "%s%s %s%s\n", p.bold, status, ch.Heading, p.reset)
		if ch.Status == sections.Moved {
			continue
		}
		for _, l := range strings.SplitAfter(ch.Unified(), "\n") {
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
