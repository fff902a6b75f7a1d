package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/hooks"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

func syncCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "sync",
		Usage: "merge notes.md into the checkpoint, recover the delta, promote decisions",
		Description: `A full sync (the default) routes every notes.md entry into its checkpoint section (or,
tagged [rule!] [fact!] [decision!], into MEMORY.md), keeps every exact literal byte for
byte (or aborts and writes nothing), tidies §3, renders the task tree from --tasks,
spills sections over budget into checkpoint-<topic>.md, resets notes.md to its template,
recovers the delta from --transcript/--log, and promotes Key Decisions to the knowledge
graph. The session's change is one commit; the knowledge repository's change is applied
with it, all or nothing.

A sparse sync only recovers the delta (six: 📡) and updates the metadata: cheap enough
for every agent turn. The transcript is read from where the last sync of that transcript
stopped and remembered for the next one; without --transcript, the sync follows the one
the last sync followed, else the one ckpt init --transcript (or an agent hook) recorded.

Notes tags: [decision] [task] [done] [blocker] [note] [next] [intent], and for eleven also
[rule] [fact] [bug] [file] [resource] [literal] [status] [open]; "!" after a tag sends the
entry to MEMORY.md. Untagged entries are routed by keywords (docs/sync.md), else to the
catch-all section.

Examples:
  ckpt sync -s alpha
  ckpt sync -s alpha --dry-run
  ckpt sync -s alpha --sparse --transcript ~/.claude/projects/p/abc.jsonl
  ckpt sync -s alpha --tasks tasks.json --json`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.BoolFlag{Name: "full", Usage: "full sync (the default)"},
			&cli.BoolFlag{Name: "sparse", Usage: "recovered delta and metadata only"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "print what would change; write nothing"},
			&cli.StringFlag{Name: "transcript", Usage: "Claude Code or generic JSONL transcript `FILE`"},
			&cli.StringSliceFlag{Name: "log", Usage: "daily log `FILE` memory/YYYY-MM-DD.md (repeatable)"},
			&cli.StringFlag{Name: "tasks", Usage: "task database `FILE` (JSON) to render the task tree from"},
			allowShrinkFlag(),
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runSync(c, env) },
	}
}

func runSync(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.Bool("full") && c.Bool("sparse") {
		return usageError("--full and --sparse exclude each other")
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	mode := ckptsync.Full
	if c.Bool("sparse") {
		mode = ckptsync.Sparse
	}
	recorded, err := hooks.LoadSessions(a.home, []string{r.ID})
	if err != nil {
		return err
	}
	rep, err := a.sync.Sync(r, ckptsync.Options{
		Mode: mode, DryRun: c.Bool("dry-run"), Transcript: c.String("transcript"),
		Recorded: recorded.Session(r.ID).Transcript,
		Logs:     c.StringSlice("log"), Tasks: c.String("tasks"), AllowShrink: c.Bool("allow-shrink"),
	})
	var rej *checkpoint.RejectedError
	if errors.As(err, &rej) && rej.Ref == "" {
		printFindings(env, env.relPath(r.WorkPath(checkpoint.File)), rej.Findings)
		return &exitError{exitRejected, fmt.Errorf("%s: the synced checkpoint would fail check; dry run, nothing written", env.relPath(r.WorkPath(checkpoint.File)))}
	}
	if err != nil {
		return a.reportCommit(c, r, checkpoint.Result{}, err)
	}
	printAutosave(env, r, rep.Autosave)
	for _, w := range rep.Warnings {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s\n", w)
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, rep)
	}
	printSyncReport(env, r, rep)
	return nil
}

func printSyncReport(env *Env, r *repo.Repo, rep *ckptsync.Report) {
	p := env.palette()
	w := env.Stdout
	if rep.DryRun {
		fmt.Fprintf(w, "%sdry run (%s): nothing written%s\n", p.bold, rep.Mode, p.reset)
		for _, ch := range rep.Changes {
			fmt.Fprintf(w, "%s %s\n", ch.Status, ch.Heading)
			if ch.Status != sections.Moved {
				fmt.Fprint(w, ch.Unified())
			}
		}
		for _, f := range rep.Files {
			if f.Name == checkpoint.File && f.Repo == "session" {
				continue
			}
			fmt.Fprint(w, sections.UnifiedDiff(f.Repo+"/a/"+f.Name, f.Repo+"/b/"+f.Name, f.Old, f.New))
		}
	} else if rep.Changed {
		fmt.Fprintf(w, "synced %s (%s) at %s\n", r.ID, rep.Mode, rep.Commit[:7])
	} else {
		fmt.Fprintf(w, "nothing to commit: %s is up to date (%s)\n", r.ID, rep.Mode)
	}
	if len(rep.Entries) > 0 {
		fmt.Fprintf(w, "  notes: %s\n", notesSummary(rep.Entries))
	}
	if len(rep.Moved) > 0 {
		fmt.Fprintf(w, "  §3: %d line(s) moved or removed\n", len(rep.Moved))
	}
	if rep.Tasks > 0 {
		fmt.Fprintf(w, "  tasks: %d rendered from the task database\n", rep.Tasks)
	}
	if rep.Delta.Entries > 0 {
		fmt.Fprintf(w, "  delta: %d entries (%s → %s)\n", rep.Delta.Entries, rep.Delta.From, rep.Delta.To)
	}
	for _, s := range rep.Spills {
		fmt.Fprintf(w, "  spill: %d item(s) of %s → %s\n", s.Count, s.Section, s.File)
	}
	promoted := 0
	for _, pr := range rep.Promotions {
		if pr.Outcome == "new" || pr.Outcome == "provenance" {
			promoted++
		}
	}
	if promoted > 0 {
		fmt.Fprintf(w, "  knowledge: %d decision(s) promoted", promoted)
		if rep.Knowledge != "" {
			fmt.Fprintf(w, " at %s", rep.Knowledge[:7])
		}
		fmt.Fprintln(w, " (ckpt kg list)")
	}
}

// notesSummary says where a sync's notes entries went: "5 entries → 🔑 2, 📋 3 (1 already
// there)".
func notesSummary(entries []ckptsync.EntryReport) string {
	counts := map[string]int{}
	var order []string
	dups := 0
	for _, e := range entries {
		if e.Dest.Status == "duplicate" {
			dups++
			continue
		}
		key := string(e.Dest.Section)
		if e.Dest.Repo == "memory" {
			key = knowledge.MemoryFile + " " + key
		}
		if counts[key] == 0 {
			order = append(order, key)
		}
		counts[key]++
	}
	parts := make([]string, 0, len(order))
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%s %d", k, counts[k]))
	}
	out := fmt.Sprintf("%d entries → %s", len(entries), strings.Join(parts, ", "))
	if dups > 0 {
		out += fmt.Sprintf(" (%d already there)", dups)
	}
	return out
}
