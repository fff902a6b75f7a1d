package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/templates"
)

func templatesCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "templates",
		Usage:     "list the templates, or print one",
		ArgsUsage: "[NAME]",
		Description: `Lists the built-in templates and those in <home>/templates/NAME.md, which add a
template or override the text of a built-in one. With NAME, prints that template.

Examples:
  ckpt templates
  ckpt templates eleven > my.md`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() > 1 {
				return usageError("templates takes one NAME at most")
			}
			a, err := open(c, env)
			if err != nil {
				return err
			}
			if c.NArg() == 1 {
				t, err := templates.Load(a.home, c.Args().First())
				if err != nil {
					return err
				}
				_, err = env.Stdout.Write(t.Source)
				return err
			}
			ts, err := templates.List(a.home)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				type tj struct {
					Name    string `json:"name"`
					Kind    string `json:"kind"`
					Origin  string `json:"origin"`
					Summary string `json:"summary"`
				}
				out := make([]tj, 0, len(ts))
				for _, t := range ts {
					out = append(out, tj{t.Name, string(t.Kind), t.Origin, t.Summary})
				}
				return printJSON(env.Stdout, out)
			}
			for _, t := range ts {
				origin := ""
				if t.Origin != "builtin" {
					origin = "  (" + env.relPath(t.Origin) + ")"
				}
				fmt.Fprintf(env.Stdout, "%-10s %-10s %s%s\n", t.Name, t.Kind, t.Summary, origin)
			}
			return nil
		},
	}
}
