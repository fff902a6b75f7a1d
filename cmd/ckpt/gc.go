package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/repo"
)

func gcCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "gc",
		Usage: "squash old sparse checkpoints, pack a session's history, prune what nothing needs",
		Description: `Squashes each run of consecutive sparse checkpoints older than --squash-sparse-older-than
into one commit (the run's last files; its sections and times in the message), then packs.
Full, manual, merge and restore checkpoints are kept. Only history that was never pushed
is rewritten; --force rewrites pushed history too and says what it rewrote (the next push
then needs --force). Without --squash-sparse-older-than, gc only packs and prunes. While a
merge is pending (a pull left conflicts), gc refuses to squash.

Packing keeps every object reachable from main, any ref under refs/ (rejected writes
included), MERGE_HEAD, any reflog entry and the index, so a squashed commit stays
reachable through the reflog. Other objects are deleted only once their file is older
than --prune (default 14d, like git prune); --prune now deletes them at once. The new pack
is written and fsynced before anything is deleted: a kill at any moment leaves the
repository valid.

Examples:
  ckpt gc --all --squash-sparse-older-than 30d
  ckpt gc -s alpha --squash-sparse-older-than 7d --dry-run
  ckpt gc -s alpha --prune now`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.BoolFlag{Name: "all", Usage: "every session"},
			&cli.StringFlag{Name: "squash-sparse-older-than", Usage: "squash sparse checkpoints older than `AGE` (30d, 12h)"},
			&cli.BoolFlag{Name: "force", Usage: "also rewrite history that was pushed"},
			&cli.StringFlag{Name: "prune", Value: "14d", Usage: "delete unreachable objects older than `AGE` (14d, 12h, now)"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be squashed; change nothing"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runGC(c, env) },
	}
}

// parseAge reads 30d, 12h, 90m.
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("age %q: want a number of days like 30d", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("age %q: want 30d, 12h or 90m", s)
	}
	return d, nil
}

type gcJSON struct {
	Session       string `json:"session"`
	Before        string `json:"before"`
	After         string `json:"after"`
	Runs          int    `json:"runs"`
	Squashed      int    `json:"squashed"`
	Rewritten     int    `json:"rewritten"`
	RewrotePushed bool   `json:"rewrote_pushed"`
	Kept          int    `json:"kept_pushed"`
	Packed        int    `json:"packed"`
	Pruned        int    `json:"pruned"`
	Unreachable   int    `json:"kept_unreachable"`
}

func runGC(c *cli.Context, env *Env) error {
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
	o, err := gcOptions(c, a.store.Opts.Now())
	if err != nil {
		return err
	}
	rs, err := a.sessionsOrAll(c)
	if err != nil {
		return err
	}
	var out []gcJSON
	for _, r := range rs {
		rep, err := a.remote.GC(r, o)
		if err != nil {
			return fmt.Errorf("%s: %w", r.ID, err)
		}
		j := gcJSON{Session: r.ID, Before: rep.Before.String(), After: rep.After.String(), Runs: len(rep.Runs), Rewritten: rep.Rewritten, RewrotePushed: rep.RewrotePushed, Kept: rep.Kept,
			Packed: rep.Repack.Packed, Pruned: rep.Repack.Pruned, Unreachable: rep.Repack.Kept}
		for _, run := range rep.Runs {
			j.Squashed += run.Count
		}
		out = append(out, j)
		if !c.Bool("json") {
			printGC(env, r.ID, o, rep)
		}
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, out)
	}
	return nil
}

// gcOptions reads gc's flags; now is the clock squash ages count from.
func gcOptions(c *cli.Context, now time.Time) (remote.GCOptions, error) {
	o := remote.GCOptions{SquashOptions: checkpoint.SquashOptions{Force: c.Bool("force"), DryRun: c.Bool("dry-run")}}
	if s := c.String("squash-sparse-older-than"); s != "" {
		age, err := parseAge(s)
		if err != nil {
			return o, &exitError{exitUsage, err}
		}
		o.OlderThan = now.Add(-age)
	}
	if s := c.String("prune"); s == "now" {
		o.PruneBefore = time.Now()
	} else {
		age, err := parseAge(s)
		if err != nil {
			return o, &exitError{exitUsage, fmt.Errorf("--prune: %w", err)}
		}
		// File times are the wall clock's, whatever CKPT_NOW says.
		o.PruneBefore = time.Now().Add(-age)
	}
	return o, nil
}

// printGC says what gc did to one session.
func printGC(env *Env, id string, o remote.GCOptions, rep remote.GCReport) {
	verb := "squashed"
	if o.DryRun {
		verb = "would squash"
	}
	for _, run := range rep.Runs {
		fmt.Fprintf(env.Stdout, "%s: %s %d sparse checkpoints %s..%s (%s to %s)\n", id, verb, run.Count,
			repo.ShortHash(run.First), repo.ShortHash(run.Last), run.From.UTC().Format(time.RFC3339), run.To.UTC().Format(time.RFC3339))
	}
	if rep.RewrotePushed && !o.DryRun {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s: rewrote history a remote has (%s → %s); the next push needs --force\n", id, repo.ShortHash(rep.Before), repo.ShortHash(rep.After))
	}
	if rep.Kept > 0 && len(rep.Runs) == 0 && !o.OlderThan.IsZero() {
		fmt.Fprintf(env.Stdout, "%s: %d pushed checkpoint(s) left as they are (--force rewrites them)\n", id, rep.Kept)
	}
	if !o.DryRun {
		fmt.Fprintf(env.Stdout, "%s: %d objects packed, %d unreachable pruned, %d unreachable kept until older than --prune\n", id, rep.Repack.Packed, rep.Repack.Pruned, rep.Repack.Kept)
	}
}
