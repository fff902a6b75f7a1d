package main

import (
	"fmt"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/remote"
)

func mergeDriverCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "merge-driver",
		Usage:     "git merge driver: merge a checkpoint file section by section",
		ArgsUsage: "BASE OURS THEIRS [PATH]",
		Description: `Follows git's merge-driver contract: merges BASE, OURS and THEIRS section by section,
writes the result to OURS, exits 0 when clean and 1 when conflicts were left (between
markers, inside their section). knowledge-graph.md merges by entry id and never
conflicts. Register it with ckpt hooks install --merge-driver, which writes
.gitattributes and the merge.ckpt.driver setting ("` + "ckpt merge-driver %O %A %B %P" + `").

Examples:
  ckpt hooks install --merge-driver
  ckpt merge-driver base.md checkpoint.md theirs.md checkpoint.md`,
		Action: func(c *cli.Context) error { return runMergeDriver(c, env) },
	}
}

func runMergeDriver(c *cli.Context, env *Env) error {
	if c.NArg() < 3 || c.NArg() > 4 {
		return usageError("merge-driver takes BASE OURS THEIRS [PATH]")
	}
	args := c.Args().Slice()
	read := func(p string) ([]byte, error) {
		b, err := hooks.ReadMergeInput(p)
		if err != nil {
			return nil, fmt.Errorf("merge-driver: %w", err)
		}
		return b, nil
	}
	base, err := read(args[0])
	if err != nil {
		return err
	}
	ours, err := read(args[1])
	if err != nil {
		return err
	}
	theirs, err := read(args[2])
	if err != nil {
		return err
	}
	name := filepath.Base(args[1])
	if len(args) == 4 {
		name = filepath.Base(args[3])
	}
	// The template, when a store is at hand: the one whose headings match best.
	var t *checkpoint.Template
	if a, err := open(c, env); err == nil {
		t, _ = a.svc.LoadTemplate(a.svc.GuessTemplate(ours))
	}
	result, conflicts, err := remote.MergeFile(name, base, ours, theirs, t, "theirs")
	if err != nil {
		return err
	}
	if err := hooks.WriteMergeResult(args[1], result); err != nil {
		return fmt.Errorf("merge-driver: %w", err)
	}
	if len(conflicts) > 0 {
		shown := name
		if len(args) == 4 {
			shown = args[3]
		}
		for _, cf := range conflicts {
			fmt.Fprintf(env.Stderr, "%s:%d: conflict in %s (%s)\n", shown, cf.StartLine, cf.Section, cf.Heading)
		}
		return silentExit(1)
	}
	return nil
}
