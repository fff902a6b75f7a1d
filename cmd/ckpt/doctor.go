package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/repo"
)

func doctorCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check a session's repository and repair what can be repaired without loss",
		Description: `Checks that main names a commit whose whole history is there, that HEAD points at main,
that a pending merge (MERGE_HEAD) names a commit the repository holds, that no pack lacks
its index and that no lock file was left by a killed process, then repairs:

  - a deleted, zeroed or garbled refs/heads/main is restored from the newest reflog entry
    (logs/refs/heads/main, then logs/HEAD) whose commit is there with its whole history;
    garbled bytes are kept in .git/ckpt-doctor/
  - a MERGE_HEAD whose commit is gone is moved to .git/ckpt-doctor/ (the next pull merges
    again); one already in main's history is cleared
  - a stale lock file is removed; a pack without index is indexed

Objects that are gone are reported, not invented. Exit 1 while a problem remains.

Examples:
  ckpt doctor -s alpha
  ckpt doctor -s alpha --dry-run
  ckpt doctor --all --json`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.BoolFlag{Name: "all", Usage: "every session"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be repaired; change nothing"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runDoctor(c, env) },
	}
}

type doctorJSON struct {
	Session  string         `json:"session"`
	OK       bool           `json:"ok"`
	Findings []repo.Finding `json:"findings"`
}

func runDoctor(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if err := oneOrAll(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	rs, err := a.sessionsOrAll(c)
	if err != nil {
		return err
	}
	out := []doctorJSON{}
	left := 0
	for _, r := range rs {
		rep, err := a.store.Doctor(r, repo.DoctorOptions{DryRun: c.Bool("dry-run")})
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		left += rep.Unrepaired()
		out = append(out, doctorJSON{Session: r.ID, OK: rep.Unrepaired() == 0, Findings: append([]repo.Finding{}, rep.Findings...)})
		if c.Bool("json") {
			continue
		}
		if len(rep.Findings) == 0 {
			fmt.Fprintf(env.Stdout, "%s: ok\n", r.ID)
		}
		for _, f := range rep.Findings {
			if f.Repaired {
				fmt.Fprintf(env.Stdout, "%s: %s: %s\n", r.ID, f.Problem, f.Action)
			} else {
				fmt.Fprintf(env.Stdout, "%s: %s: not repaired; %s\n", r.ID, f.Problem, f.Action)
			}
		}
	}
	if c.Bool("json") {
		if err := printJSON(env.Stdout, out); err != nil {
			return err
		}
	}
	if left > 0 {
		return fmt.Errorf("%d problem(s) not repaired", left)
	}
	return nil
}
