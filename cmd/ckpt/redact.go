package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/remote"
	"github.com/ckpt-dev/ckpt/repo"
)

func redactCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "redact",
		Usage: "rewrite secrets out of a session's history, sending nothing",
		Description: `Rewrites the session's history so that every version of every file, every commit message
and every rejected write holds [REDACTED:<kind>:<hash>] instead of each possible secret
the scan finds (the push scan; config.toml [secrets] allow applies), <kind> being the
rule and <hash> the first 8 hex digits of the secret's SHA-256, so one secret gets one
marker. The refs, packed-refs and reflogs are rewritten with it and the old objects are
pruned: afterwards the secret is in no object of the repository. The redaction is a
commit of its own on top (trigger redact) whose Ckpt-Redacted trailer names the kinds
and counts, never the values. Uncommitted bytes in the work tree are committed first,
then the work tree is redacted too.

History a remote already has is left as it is; --force rewrites it too, and the output
says which refs each remote must drop: push them with ckpt push --force, then have the
remote prune its old objects. Rotate a secret that reached a remote either way.

Examples:
  ckpt redact -s alpha --dry-run
  ckpt redact -s alpha && ckpt push
  ckpt redact --all --json`,
		Flags: []cli.Flag{
			sessionFlag(),
			&cli.BoolFlag{Name: "all", Usage: "every session and the knowledge repository"},
			&cli.BoolFlag{Name: "knowledge", Usage: "the knowledge repository"},
			&cli.BoolFlag{Name: "force", Usage: "also rewrite history a remote has"},
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "say what would be redacted; change nothing"},
			jsonFlag(),
		},
		Action: func(c *cli.Context) error { return runRedact(c, env) },
	}
}

func runRedact(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{c.Bool("all"), c.Bool("knowledge"), c.String("session") != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return usageError("give -s ID, --knowledge or --all")
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	rs, err := a.redactTargets(c)
	if err != nil {
		return err
	}
	o := remote.RedactOptions{Force: c.Bool("force"), DryRun: c.Bool("dry-run")}
	reps := []*remote.RedactReport{}
	var failed []string
	for _, r := range rs {
		rep, err := a.remote.Redact(r, o)
		if err != nil && len(rs) == 1 {
			return err // its own exit code: busy is 4
		}
		if err != nil {
			// One repository failing does not stop the others.
			printError(env.Stderr, err)
			failed = append(failed, r.ID)
			continue
		}
		reps = append(reps, rep)
		if !c.Bool("json") {
			printRedact(env, rep)
		}
	}
	if c.Bool("json") {
		if err := printJSON(env.Stdout, reps); err != nil {
			return err
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("redact failed in %s", strings.Join(failed, ", "))
	}
	return nil
}

// redactTargets opens the repositories redact works on: the session of -s; with --all
// every session and the knowledge repository when there is one; with --knowledge that
// repository, which must be there.
func (a *app) redactTargets(c *cli.Context) ([]*repo.Repo, error) {
	if c.String("session") != "" {
		return a.sessionsOrAll(c)
	}
	var rs []*repo.Repo
	if c.Bool("all") {
		var err error
		if rs, err = a.sessionsOrAll(c); err != nil {
			return nil, err
		}
	}
	k, err := a.store.OpenKnowledge()
	switch {
	case err == nil:
		rs = append(rs, k)
	case !errors.Is(err, repo.ErrNotFound) || c.Bool("knowledge"):
		return nil, err
	}
	return rs, nil
}

func printRedact(env *Env, rep *remote.RedactReport) {
	w := env.Stdout
	switch {
	case rep.Total() == 0:
		fmt.Fprintf(w, "%s: nothing to redact\n", rep.Session)
	case rep.DryRun:
		fmt.Fprintf(w, "%s: would redact %d possible secret(s) (%s) in %d commit(s)\n", rep.Session, rep.Total(), kindText(rep), rep.Commits)
	default:
		fmt.Fprintf(w, "%s: redacted %d possible secret(s) (%s) in %d commit(s); commit %s\n", rep.Session, rep.Total(), kindText(rep), rep.Commits, rep.Commit[:min(7, len(rep.Commit))])
	}
	for _, r := range rep.Redacted {
		fmt.Fprintf(w, "  %s:%d: %s: %s → %s\n", r.File, r.Line, r.Rule, r.Secret, r.Marker)
	}
	if rep.Recorded != "" {
		fmt.Fprintf(w, "  recorded the work tree first as %s\n", rep.Recorded[:7])
	}
	if rep.Rejected != "" {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s: the work tree failed check; its bytes are kept as %s (redacted) and on disk (redacted)\n", rep.Session, rep.Rejected)
	}
	if len(rep.Pushed) > 0 {
		fmt.Fprintf(env.Stderr, "ckpt: warning: %s: %d possible secret(s) are in history a remote already has, left as they are:\n", rep.Session, len(rep.Pushed))
		for _, r := range rep.Pushed {
			fmt.Fprintf(env.Stderr, "ckpt:   %s:%d: %s: %s\n", r.File, r.Line, r.Rule, r.Secret)
		}
		fmt.Fprintf(env.Stderr, "ckpt: hint: rotate them; %s --force rewrites pushed history too (then ckpt push --force)\n", redactCmd(rep))
	}
	for _, d := range rep.Remotes {
		fmt.Fprintf(w, "  remote %s must drop %s %s: ckpt push --force --remote %s%s replaces it with %s; then prune the remote (git gc --prune=now there) and rotate the secret\n",
			d.Remote, d.Ref, d.Old[:7], d.Remote, pushTarget(rep.Session, d.Ref), d.New[:7])
	}
}

func kindText(rep *remote.RedactReport) string {
	var parts []string
	for _, k := range strings.Split(rep.KindList(), ",") {
		rule, n, _ := strings.Cut(k, ":")
		parts = append(parts, rule+" ×"+n)
	}
	return strings.Join(parts, ", ")
}

func redactCmd(rep *remote.RedactReport) string {
	if rep.Knowledge {
		return "ckpt redact --knowledge"
	}
	return "ckpt redact -s " + rep.Session
}

// pushTarget is the push option that sends one repository: -s ID, or --all for the
// knowledge repository, which travels with every session.
func pushTarget(session, ref string) string {
	if ref == repo.KnowledgeRef {
		return " --all"
	}
	return " -s " + session
}
