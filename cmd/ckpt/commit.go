package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/hint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

func commitCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "commit",
		Usage: "commit the session's files as they are on disk",
		Description: `Commits checkpoint.md, notes.md and spill files as a harness left them in the work
tree (ckpt path -s ID prints where that is). The checkpoint is checked first; a
rejected one is not committed (exit 3) and stays on disk as it is for you to fix.

With --knowledge, commits the knowledge repository's work tree instead (MEMORY.md and
knowledge-graph.md edited by hand); that is also how a pull's conflict in them is
finished once the conflict markers are gone.

Examples:
  ckpt commit -s alpha
  ckpt commit -s alpha --trigger hook -m "pre-compaction snapshot"
  ckpt commit --knowledge`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.StringFlag{Name: "message", Aliases: []string{"m"}, Usage: "describe the change in the commit subject"},
			&cli.StringFlag{Name: "trigger", Value: string(checkpoint.TriggerManual), Usage: "what caused the commit: " + triggerList()},
			allowShrinkFlag(),
			&cli.BoolFlag{Name: "knowledge", Usage: "commit the knowledge repository's work tree (MEMORY.md, knowledge-graph.md)"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runCommit(c, env) },
	}
}

func runCommit(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	trigger, err := checkpoint.ParseTrigger(c.String("trigger"))
	if err != nil {
		return &exitError{exitUsage, fmt.Errorf("--%w", err)}
	}
	if c.Bool("knowledge") {
		return runCommitKnowledge(c, env)
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	res, err := a.svc.CommitDisk(r, checkpoint.CommitOptions{Trigger: trigger, Message: c.String("message"), AllowShrink: c.Bool("allow-shrink")})
	return a.reportCommit(c, r, res, err)
}

// runCommitKnowledge commits the knowledge repository's work tree.
func runCommitKnowledge(c *cli.Context, env *Env) error {
	if c.IsSet("session") {
		return usageError("give -s ID or --knowledge, not both")
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	h, changed, err := knowledge.CommitDisk(a.store, c.String("message"))
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, commitJSON{Session: "knowledge", Commit: h.String(), Changed: changed, Sections: []string{}, Files: []string{}, Warnings: []string{}})
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "nothing to commit: knowledge is unchanged at %s\n", repo.ShortHash(h))
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s knowledge committed\n", repo.ShortHash(h))
	return nil
}

func triggerList() string {
	names := make([]string, len(checkpoint.Triggers))
	for i, t := range checkpoint.Triggers {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// commitJSON is what write, commit, restore and sync print with --json.
type commitJSON struct {
	Session  string   `json:"session"`
	Commit   string   `json:"commit"`
	Changed  bool     `json:"changed"`
	Subject  string   `json:"subject,omitempty"`
	Sections []string `json:"sections"`
	Files    []string `json:"files"`
	Warnings []string `json:"warnings"`
	// Autosave is the commit of uncommitted bytes found before the command replaced files.
	Autosave *checkpoint.Autosave `json:"autosave,omitempty"`
	Repaired []string             `json:"repaired,omitempty"`
	Kept     []string             `json:"kept,omitempty"`
}

// reportCommit prints the outcome of a commit: check messages, the commit made or "nothing
// to commit", or the rejection (exit 3).
func (a *app) reportCommit(c *cli.Context, r *repo.Repo, res checkpoint.Result, err error) error {
	file := a.env.relPath(r.WorkPath(checkpoint.File))
	var rej *checkpoint.RejectedError
	if errors.As(err, &rej) {
		printAutosave(a.env, r, res.Autosave)
		printFindings(a.env, file, rej.Findings)
		n := 0
		for _, f := range rej.Findings {
			if f.Severity == sections.Error {
				n++
			}
		}
		rev := strings.TrimPrefix(rej.Ref, "refs/ckpt/")
		return &exitError{exitRejected, hint.New(fmt.Errorf("%s: checkpoint rejected: %d error(s), nothing committed; the bytes are kept as %s", file, n, rev), "ckpt show -s %s --rev %s shows them", r.ID, rev)}
	}
	if err != nil {
		return err
	}
	printAutosave(a.env, r, res.Autosave)
	printFindings(a.env, file, res.Findings)
	if c.Bool("json") {
		out := commitJSON{Session: r.ID, Commit: res.Commit.String(), Changed: res.Changed, Subject: res.Subject, Sections: []string{}, Files: []string{}, Warnings: []string{},
			Autosave: res.Autosave, Repaired: res.Repaired, Kept: res.Kept}
		for _, s := range res.Sections {
			out.Sections = append(out.Sections, string(s))
		}
		out.Files = append(out.Files, res.Files...)
		for _, f := range res.Findings {
			out.Warnings = append(out.Warnings, f.Message)
		}
		return printJSON(a.env.Stdout, out)
	}
	if len(res.Kept) > 0 {
		fmt.Fprintf(a.env.Stderr, "ckpt: %s: entries appended meanwhile are kept for the next sync\n", strings.Join(res.Kept, ", "))
	}
	if !res.Changed {
		if len(res.Repaired) > 0 {
			fmt.Fprintf(a.env.Stdout, "restored %s as committed in %s; nothing to commit\n", strings.Join(res.Repaired, ", "), repo.ShortHash(res.Commit))
			return nil
		}
		fmt.Fprintf(a.env.Stdout, "nothing to commit: %s is unchanged at %s\n", r.ID, repo.ShortHash(res.Commit))
		return nil
	}
	fmt.Fprintf(a.env.Stdout, "%s %s\n", repo.ShortHash(res.Commit), res.Subject)
	return nil
}

// printAutosave says, on standard error, what a command did with uncommitted bytes it
// found in the work tree before replacing files there.
func printAutosave(env *Env, r *repo.Repo, au *checkpoint.Autosave) {
	if au == nil {
		return
	}
	if au.Commit != repo.ZeroHash {
		fmt.Fprintf(env.Stderr, "ckpt: autosave: committed the uncommitted %s first as %s\n", strings.Join(au.Files, ", "), repo.ShortHash(au.Commit))
	}
	if au.RejectedRef != "" {
		fmt.Fprintf(env.Stderr, "ckpt: autosave: %s on disk fails check; its bytes are kept as %s and left on disk\n", strings.Join(au.Rejected, ", "), strings.TrimPrefix(au.RejectedRef, "refs/ckpt/"))
	}
}

// printFindings prints check messages as file:line: severity: message, on standard error.
func printFindings(env *Env, file string, fs []sections.Finding) {
	for _, f := range fs {
		fmt.Fprintf(env.Stderr, "%s:%d: %s: %s\n", file, f.Line, f.Severity, f.Message)
	}
}
