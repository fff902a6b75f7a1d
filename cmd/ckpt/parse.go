package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/sections"
)

func parseCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "parse",
		Usage:     "show how ckpt splits a checkpoint into sections",
		ArgsUsage: "FILE|-",
		Description: `Prints the preamble, metadata and sections of FILE (- reads standard input) as ckpt
sees them. Sections are identified by emoji (six), §N (eleven), else by their heading.
With --json the shape is {"meta":{…},"preamble":"…","sections":[{"id","heading",
"directive","body","line"}]}; concatenating preamble and each section's heading line,
directive line and body gives back the file byte for byte.

Examples:
  ckpt parse --json checkpoint.md | jq '.sections[].id'
  ckpt parse --template eleven checkpoint.md`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "template", Aliases: []string{"t"}, Usage: "split at this template's heading level"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runParse(c, env) },
	}
}

type parseJSON struct {
	Meta     map[string]string `json:"meta"`
	Preamble string            `json:"preamble"`
	Sections []sectionJSON     `json:"sections"`
}

type sectionJSON struct {
	ID        string `json:"id"`
	Heading   string `json:"heading"`
	Directive string `json:"directive"`
	Body      string `json:"body"`
	Line      int    `json:"line"`
}

func runParse(c *cli.Context, env *Env) error {
	if c.NArg() != 1 {
		return usageError("parse takes one FILE (or - for standard input)")
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	path := c.Args().First()
	var src []byte
	if path == "-" {
		src, err = io.ReadAll(env.Stdin)
	} else {
		src, err = os.ReadFile(path)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	name := c.String("template")
	if name == "" {
		name = a.svc.GuessTemplate(src)
	}
	t, err := a.svc.LoadTemplate(name)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	doc := t.Parse(src)
	if c.Bool("json") {
		out := parseJSON{Meta: map[string]string{}, Preamble: string(doc.Preamble), Sections: []sectionJSON{}}
		for _, m := range doc.Metadata() {
			if _, dup := out.Meta[m.Key]; !dup {
				out.Meta[m.Key] = m.Value
			}
		}
		for _, s := range doc.Sections {
			out.Sections = append(out.Sections, sectionJSON{string(s.ID), string(s.Heading), string(s.Directive), string(s.Body), s.Line})
		}
		return printJSON(env.Stdout, out)
	}
	fmt.Fprintf(env.Stdout, "template %s, sections at heading level %d\n", name, doc.Level)
	for _, m := range doc.Metadata() {
		fmt.Fprintf(env.Stdout, "meta  %4d  %s = %s\n", m.Line, m.Key, m.Value)
	}
	for _, s := range doc.Sections {
		fmt.Fprintf(env.Stdout, "%-4s  %4d  %s  (%d bytes)\n", sectionLabel(s.ID), s.Line, s.HeadingLine(), len(s.Body))
	}
	return nil
}

func sectionLabel(id sections.ID) string {
	if id == "" {
		return `""`
	}
	return string(id)
}
