package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/sections"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

func checkCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check a checkpoint against its template",
		ArgsUsage: "[FILE]",
		Description: `Checks the session's checkpoint.md as it is on disk, or FILE, against a template:
every section present once and in order, heading and italic directive lines exactly as
the template has them, metadata lines well formed, §1 holding a blockquote (eleven), at
most 5 open Task Stack items (six, a warning), no conflict markers, no likely secrets
(a warning). For a session, the shrink guard also compares with the last commit: losing
any Key Decision, or more than half of another section's entries (the current task and
the recovered delta excepted), is an error unless the entries moved to a spill file or
were marked superseded (~~…~~ or "(superseded by D7)"); --allow-shrink skips it.

Prints file:line: error|warning: message and exits 3 when there are errors. Without
--template, a session's own template is used, and for a bare FILE the template whose
headings match best.

Examples:
  ckpt check -s alpha
  ckpt check --template eleven checkpoint.md
  ckpt check -s alpha --tasks tasks.json`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "check against this template"},
			&cli.StringFlag{Name: "tasks", Usage: "task database `FILE`: flag task ids that are not in it"},
			allowShrinkFlag(),
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runCheck(c, env) },
	}
}

type findingJSON struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Severity string `json:"severity"`
	Section  string `json:"section,omitempty"`
	Message  string `json:"message"`
}

func runCheck(c *cli.Context, env *Env) error {
	if c.NArg() > 1 {
		return usageError("check takes one FILE at most")
	}
	if c.NArg() == 1 && c.IsSet("session") {
		return usageError("give -s ID or FILE, not both")
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	file, content, tmpl, opts, err := a.checkTarget(c)
	if err != nil {
		return err
	}
	t, err := a.svc.LoadTemplate(tmpl)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	if p := c.String("tasks"); p != "" {
		db, err := ckptsync.LoadTasks(p)
		if err != nil {
			return err
		}
		opts.TaskIDs = db.IDs()
	}
	_, findings := a.svc.Check(t, content, opts)
	if c.Bool("json") {
		out := make([]findingJSON, 0, len(findings))
		for _, f := range findings {
			out = append(out, findingJSON{file, f.Line, string(f.Severity), string(f.Section), f.Message})
		}
		if err := printJSON(env.Stdout, out); err != nil {
			return err
		}
	} else {
		for _, f := range findings {
			fmt.Fprintf(env.Stdout, "%s:%d: %s: %s\n", file, f.Line, f.Severity, f.Message)
		}
	}
	if sections.HasErrors(findings) {
		return silentExit(exitRejected)
	}
	return nil
}

// checkTarget reads what check checks: FILE, against --template or the template whose
// headings match best; or the session's checkpoint on disk, against --template or the
// session's, with the shrink guard's base unless --allow-shrink.
func (a *app) checkTarget(c *cli.Context) (file string, content []byte, tmpl string, opts checkpoint.CheckOptions, err error) {
	tmpl = c.String("template")
	if c.NArg() == 1 {
		file = c.Args().First()
		content, err = os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			err = fmt.Errorf("%s: no such file", file)
		}
		if err == nil && tmpl == "" {
			tmpl = a.svc.GuessTemplate(content)
		}
		return file, content, tmpl, opts, err
	}
	r, err := a.session(c)
	if err != nil {
		return "", nil, "", opts, err
	}
	if !c.Bool("allow-shrink") {
		if opts.Previous, opts.Elsewhere, err = a.svc.ShrinkBase(r); err != nil {
			return "", nil, "", opts, err
		}
	}
	p := r.WorkPath(checkpoint.File)
	file = a.env.relPath(p)
	if content, err = os.ReadFile(p); err != nil {
		return file, nil, "", opts, fmt.Errorf("%s: %w", file, err)
	}
	if tmpl == "" {
		tmpl = r.Template()
	}
	return file, content, tmpl, opts, nil
}
