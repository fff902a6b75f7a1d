//go:build !ckpt_lean

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/ui"
)

func uiCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "ui",
		Usage: uiUsage,
		Description: `Serves a read-only history browser: sessions, each session's timeline, a commit's
checkpoint rendered with its section diffs, one section across time with blame, any two
revisions compared, the knowledge graph and search. The first line of standard output is
the address it serves, http://127.0.0.1:PORT/; it runs until interrupted (Ctrl-C).

It listens on loopback only. Another address is refused unless --allow-remote is given;
then every request needs the token printed at start (the second line of output is the
address with ?token=, which leaves a cookie in the browser). It answers GET and HEAD only,
takes shared locks and never writes the store.

Examples:
  ckpt ui
  ckpt ui --addr 127.0.0.1:8080 --open
  ckpt ui --addr 0.0.0.0:8080 --allow-remote`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen on `HOST:PORT` (port 0: any free port)"},
			&cli.BoolFlag{Name: "open", Usage: "open the address in the default browser"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow an address other than loopback; requests then need a token"},
		},
		Action: func(c *cli.Context) error { return runUI(c, env) },
	}
}

func runUI(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	ln, err := ui.Listen(c.String("addr"), c.Bool("allow-remote"))
	if errors.Is(err, ui.ErrBadAddr) || errors.Is(err, ui.ErrNotLoopback) {
		return &exitError{exitUsage, err}
	}
	if err != nil {
		return err
	}
	defer ln.Close()
	token := ""
	if ln.Remote {
		if token, err = ui.NewToken(); err != nil {
			return err
		}
	}
	srv, err := ui.New(ui.Options{Store: a.store, Config: a.cfg, Token: token, Hosts: ln.Hosts,
		Log: func(format string, args ...any) { fmt.Fprintf(env.Stderr, "ckpt: "+format+"\n", args...) }})
	if err != nil {
		return err
	}
	address := ln.URL()
	fmt.Fprintln(env.Stdout, address)
	if token != "" {
		address += "?token=" + token
		fmt.Fprintln(env.Stdout, address)
		fmt.Fprintf(env.Stderr, "ckpt: listening beyond loopback: open the address with ?token= once; anyone with the token can read every session\n")
	}
	// Main buffers standard output; a script waiting for the address must see it now.
	if f, ok := env.Stdout.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
	if c.Bool("open") {
		openBrowser(address, env)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Serve(ctx, ln)
}

// openBrowser asks the desktop to open url; failing that, the address printed is enough.
func openBrowser(url string, env *Env) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.Command("xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(env.Stderr, "ckpt: warning: cannot open a browser: %v\n", err)
		return
	}
	go func() { _ = cmd.Wait() }()
}
