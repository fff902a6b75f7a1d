//go:build !ckpt_lean

package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/ckpt-dev/ckpt/mcp"
)

func mcpCommand(env *Env) *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: mcpUsage,
		Description: `Runs a Model Context Protocol server on standard input and output, so that an agent can
recall its own history: what the checkpoint said before the last compaction, when a
decision or a blocker appeared, what the knowledge graph holds.

Tools: ckpt_sessions, ckpt_log, ckpt_show, ckpt_diff, ckpt_blame, ckpt_search,
ckpt_decisions, and with --allow-notes ckpt_note (appends one entry to a session's
notes.md, the one write to a session; reads take shared locks, and search keeps its index
cache under state/search). Resources: ckpt://SESSION/FILE@REV#SECTION.
Every result is paged and carries session, commit and time. The store is the one the
other commands use: --home, $CKPT_HOME, or .ckpt/ at the top of the git work tree the
server starts in.

Claude Code: ckpt hooks install --claude --mcp adds it to the project's .mcp.json.
Other clients: add this to their MCP configuration (the file and the outer key vary:
mcpServers for Claude Desktop, Cursor and Windsurf, servers for VS Code):

  {
    "mcpServers": {
      "ckpt": {
        "type": "stdio",
        "command": "ckpt",
        "args": ["mcp"]
      }
    }
  }

Give "args": ["--home", "/path/to/.ckpt", "mcp"] when the client does not start the
server in the project, and add "--allow-notes" after "mcp" to let the agent add notes.

Examples:
  ckpt mcp
  ckpt mcp --allow-notes
  ckpt --home ~/work/project/.ckpt mcp`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "allow-notes", Usage: "offer ckpt_note, which appends an entry to a session's notes.md"},
		},
		Action: func(c *cli.Context) error { return runMCP(c, env) },
	}
}

func runMCP(c *cli.Context, env *Env) error {
	if err := noArgs(c); err != nil {
		return err
	}
	a, err := open(c, env)
	if err != nil {
		return err
	}
	// A client that goes away mid-answer must not kill the server with SIGPIPE: the write
	// fails instead, and the server ends when its input does.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := mcp.New(a.svc, mcp.Options{AllowNotes: c.Bool("allow-notes"), Version: version()})
	return srv.Serve(ctx, env.Stdin, env.Stdout)
}
