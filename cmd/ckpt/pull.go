package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/remote"
)

func pullCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "pull",
		Usage: "bring sessions and the knowledge graph from a remote, merging section by section",
		Description: `Fetches the remote's sessions and knowledge graph. A session new here is created; one
that can fast-forward does; one that advanced on both machines is merged section by
section: a section changed on one side takes that side, changed on both it is merged line
by line, and a true conflict keeps both versions between conflict markers inside that
section. Then the merged files stay in the work tree, the pending merge is recorded, and
ckpt exits 5: resolve the markers (ckpt check shows them), then ckpt commit -s ID.
Uncommitted changes in a session's work tree are committed before it is merged.

Everything that would arrive is checked before anything is written: a commit or tree git
fsck calls malformed, a tree entry that leaves the work tree or names .git (in any case or
file-system alias), a symlink, a submodule, a subdirectory, a mode other than 100644 or
100755, or a file a session does not hold refuses the whole pull (exit 1), naming the
remote, the commit and the entry. A remote branch whose name is not a session id is
skipped with a warning.

Examples:
  ckpt pull
  ckpt pull -s alpha --remote backup`,
		Flags: travelFlags(),
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			a, o, err := travelOptions(c, env)
			if err != nil {
				return err
			}
			rep, err := a.remote.Pull(o)
			endProgress(env)
			printWarnings(env, rep)
			if err != nil && !errors.Is(err, remote.ErrConflict) {
				// What the pull did before it stopped (sessions made, brought up to date).
				if rep != nil && len(rep.Sessions) > 0 && !c.Bool("json") {
					printPull(env, rep)
				}
				return err
			}
			if c.Bool("json") {
				if jerr := printJSON(env.Stdout, rep); jerr != nil {
					return jerr
				}
				return err
			}
			printPull(env, rep)
			return err
		},
	}
}

// printWarnings says on stderr what a pull skipped.
func printWarnings(env *Env, rep *remote.PullReport) {
	if rep == nil {
		return
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s\n", w)
	}
}

func printPull(env *Env, rep *remote.PullReport) {
	changed := 0
	for _, s := range rep.Sessions {
		switch s.Result {
		case "up-to-date", "ahead":
			continue
		case "conflict":
			for _, c := range s.Conflicts {
				fmt.Fprintf(env.Stderr, "%s: conflict in %s (%s) lines %d-%d\n", s.Session, c.Section, c.Heading, c.StartLine, c.EndLine)
			}
		}
		changed++
		line := fmt.Sprintf("%s: %s", s.Session, s.Result)
		if len(s.Commit) >= 7 {
			line += " " + s.Commit[:7]
		}
		fmt.Fprintln(env.Stdout, line)
	}
	if changed == 0 {
		fmt.Fprintf(env.Stdout, "already up to date with %s\n", rep.Remote)
	}
}

func cloneCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:      "clone",
		Usage:     "make a new store from a remote: every session and the knowledge graph",
		ArgsUsage: "URL DIR",
		Description: `Creates the store DIR (it must not hold sessions) with every session and the knowledge
repository of the remote store at URL, and records URL as the remote origin. What arrives
is checked as ckpt pull checks it; a clone that fails removes DIR if it made it.

Example:
  ckpt clone git@github.com:me/agent-memory.git ~/.ckpt`,
		Flags: []cli.Flag{jsonFlag()},
		Action: func(c *cli.Context) (err error) {
			if c.NArg() != 2 {
				return usageError("clone takes URL and DIR")
			}
			a, err := openHome(c.Args().Get(1), env)
			if err != nil {
				return err
			}
			// A clone that fails takes back the directory it made, as git clone does.
			_, statErr := os.Stat(a.home)
			fresh := errors.Is(statErr, fs.ErrNotExist)
			defer func() {
				if err != nil && fresh {
					_ = os.RemoveAll(a.home)
				}
			}()
			network, err := newNetwork(a, env)
			if err != nil {
				return err
			}
			var progress func(int, int, string)
			if env.Progress {
				progress = func(done, total int, s string) { fmt.Fprintf(env.Stderr, "\r\x1b[K%d/%d %s", done, total, s) }
			}
			rep, err := a.remote.Clone(c.Args().Get(0), network, progress)
			endProgress(env)
			printWarnings(env, rep)
			if err != nil {
				return err
			}
			if err = a.ensureHome(); err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(env.Stdout, rep)
			}
			fmt.Fprintf(env.Stdout, "cloned %d repositories into %s\n", len(rep.Sessions), env.relPath(a.home))
			return nil
		},
	}
}
