package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/hooks"
)

func breakerCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "breaker",
		Usage: "inspect or reset the circuit breaker of a session",
		Description: `After breaker.failures (3) checkpoints of a session fail in a row, its breaker opens:
hooks and ticks then take sparse checkpoints only. Recovery is manual (seed 002): look at
the reason, fix it, then ckpt breaker reset -s ID.

Examples:
  ckpt breaker status
  ckpt breaker reset -s alpha`,
		Subcommands: []*cli.Command{
			{
				Name: "status", Usage: "show breakers (all sessions, or -s ID)",
				Description: `Shows each breaker: open since when and why, or closed with its count of
failures in a row.

Examples:
  ckpt breaker status
  ckpt breaker status -s alpha --json`,
				Flags:  []cli.Flag{sessionFlag(), jsonFlag()},
				Action: func(c *cli.Context) error { return runBreakerStatus(c, env) },
			},
			{
				Name: "reset", Usage: "close a session's breaker",
				Description: `Closes the breaker and forgets its failures; hooks and ticks take full
checkpoints again. Leaves a receipt in state/ticks.jsonl.

Example:
  ckpt breaker reset -s alpha`,
				Flags:  []cli.Flag{sessionFlag()},
				Action: func(c *cli.Context) error { return runBreakerReset(c, env) },
			},
		},
	}
}

func runBreakerStatus(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	st, err := hooks.LoadState(a.home)
	if err != nil {
		return err
	}
	var ids []string
	if c.IsSet("session") || c.String("session") != "" {
		r, err := a.session(c)
		if err != nil {
			return err
		}
		ids = []string{r.ID}
	} else {
		sids, err := a.store.SessionIDs()
		if err != nil {
			return err
		}
		for _, id := range sids {
			ids = append(ids, string(id))
		}
	}
	sort.Strings(ids)
	out := make([]hooks.BreakerReport, 0, len(ids))
	for _, id := range ids {
		var b hooks.Breaker
		if s := st.Sessions[id]; s != nil {
			b = s.Breaker
		}
		out = append(out, b.Report(id))
	}
	if c.Bool("json") {
		return printJSON(env.Stdout, out)
	}
	for _, b := range out {
		switch {
		case b.Open:
			fmt.Fprintf(env.Stdout, "%s: open since %s after %d failures: %s\n", b.Session, b.OpenedAt, b.Failures, b.Reason)
		case b.Failures > 0:
			fmt.Fprintf(env.Stdout, "%s: closed, %d failure(s) in a row: %s\n", b.Session, b.Failures, b.LastError)
		default:
			fmt.Fprintf(env.Stdout, "%s: closed\n", b.Session)
		}
	}
	return nil
}

func runBreakerReset(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, r, err := openSession(c, env)
	if err != nil {
		return err
	}
	before, err := hooks.NewRunner(a.svc, a.sync).Reset(r.ID)
	if err != nil {
		return err
	}
	if !before.Open {
		fmt.Fprintf(env.Stdout, "%s: breaker was closed (%d failure(s) cleared)\n", r.ID, before.Failures)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s: breaker closed (it opened %s: %s)\n", r.ID, before.OpenedAt.UTC().Format(time.RFC3339), before.Reason)
	return nil
}
