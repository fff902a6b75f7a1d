package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

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
	a, err := open(c, env)
	if err != nil {
		return err
	}
	var file, tmpl string
	var content []byte
	var opts ckptsync.CheckOptions
	if c.NArg() == 1 {
		if c.IsSet("session") {
			return usageError("give -s ID or FILE, not both")
		}
		file = c.Args().First()
		content, err = os.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: no such file", file)
		}
		if err != nil {
			return err
		}
		tmpl = c.String("template")
		if tmpl == "" {
			tmpl = a.svc.GuessTemplate(content)
		}
	} else {
		r, err := a.session(c)
		if err != nil {
			return err
		}
		if !c.Bool("allow-shrink") {
			if opts.Previous, opts.Elsewhere, err = a.svc.ShrinkBase(r); err != nil {
				return err
			}
		}
		p := r.WorkPath(ckptsync.CheckpointFile)
		file = relPath(p)
		if content, err = os.ReadFile(p); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		tmpl = c.String("template")
		if tmpl == "" {
			tmpl = r.Template()
		}
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
