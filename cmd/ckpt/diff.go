package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"

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
	q := history.DiffQuery{From: c.String("from"), To: c.String("to"), Section: c.String("section"), File: c.String("file")}
	if c.Bool("json") {
		res, err := a.history().Diff(r.ID, q)
		if err != nil {
			return sectionError(err)
		}
		return printJSON(env.Stdout, res.Changes)
	}
	// The diffs go straight to the output, one section after the other: a 1 MB rewrite
	// is never held as text. A write error stops the diff; Main's flush reports it.
	p := env.palette()
	var werr error
	_, err = a.history().DiffEach(r.ID, q, func(ch history.Change, diff func(io.Writer) error) error {
		status := ch.Status
		if ch.Moved && ch.Status == string(sections.Changed) {
			status = "changed and moved"
		}
		fmt.Fprintf(env.Stdout, "%s%s %s%s\n", p.bold, status, ch.Heading, p.reset)
		if p == (palette{}) {
			werr = diff(env.Stdout)
			return werr
		}
		cw := &colorLines{w: env.Stdout, p: p}
		if werr = diff(cw); werr == nil {
			werr = cw.flush()
		}
		return werr
	})
	if err != nil && (werr == nil || !errors.Is(err, werr)) {
		return sectionError(err)
	}
	return nil
}

// colorLines colours the lines of a unified diff written through it by their first
// characters; it keeps a line cut between two writes until its end comes.
type colorLines struct {
	w    io.Writer
	p    palette
	part []byte
	out  []byte
}

func (c *colorLines) Write(b []byte) (int, error) {
	n := len(b)
	c.out = c.out[:0]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			c.part = append(c.part, b...)
			break
		}
		line := b[:i+1]
		if len(c.part) > 0 {
			line = append(c.part, line...)
			c.part = c.part[:0]
		}
		c.out = c.appendLine(c.out, line)
		b = b[i+1:]
	}
	if _, err := c.w.Write(c.out); err != nil {
		return 0, err
	}
	return n, nil
}

// flush writes a last line that has no line ending.
func (c *colorLines) flush() error {
	if len(c.part) == 0 {
		return nil
	}
	_, err := c.w.Write(c.appendLine(c.out[:0], c.part))
	c.part = c.part[:0]
	return err
}

func (c *colorLines) appendLine(dst, l []byte) []byte {
	color := ""
	switch {
	case bytes.HasPrefix(l, []byte("+++")), bytes.HasPrefix(l, []byte("---")):
		color = c.p.bold
	case bytes.HasPrefix(l, []byte("+")):
		color = c.p.green
	case bytes.HasPrefix(l, []byte("-")):
		color = c.p.red
	case bytes.HasPrefix(l, []byte("@@")):
		color = c.p.cyan
	}
	if color == "" {
		return append(dst, l...)
	}
	dst = append(append(dst, color...), bytes.TrimSuffix(l, []byte("\n"))...)
	dst = append(dst, c.p.reset...)
	if bytes.HasSuffix(l, []byte("\n")) {
		dst = append(dst, '\n')
	}
	return dst
}
