// Package mcp serves a store's history to agents over the Model Context Protocol: the agent
// recalls what its checkpoints said before a compaction, when a decision or a blocker
// appeared, what the knowledge graph holds. Tools list sessions, pages of the log, a file or
// section at a revision, section diffs, blame, search and decisions; resources
// ckpt://SESSION/FILE@REV#SECTION name a file at a revision. It is built on the official Go
// SDK (imported here as sdk; this package's own name is mcp).
//
// The server is read-only: it reads through history (shared locks only) and search. The one
// write, ckpt_note, exists only when AllowNotes is set, and appends one entry to a session's
// notes.md as an agent would, with O_APPEND and no commit. Every result is bounded and
// carries its provenance; bad input is a tool error of one sentence, never a crash.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/history"
	"github.com/ckpt-dev/ckpt/search"
)

// Options tune the server.
type Options struct {
	// AllowNotes adds ckpt_note, the one tool that writes (to notes.md).
	AllowNotes bool
	// Version is what the server tells clients it is.
	Version string
}

// Server answers MCP requests about one store.
type Server struct {
	svc     *checkpoint.Service
	history *history.Reader
	search  *search.Searcher
	opts    Options
	sdk     *sdk.Server
}

const instructions = `ckpt keeps every version of this project's agent checkpoints (checkpoint.md, notes.md, spill files) as git commits, section by section, and a knowledge graph of decisions.
Use it to recall what was lost to a compaction: ckpt_show with rev "before-compact" gives the checkpoint as it was before the last full checkpoint; ckpt_blame says when each line of a section appeared; ckpt_log and ckpt_diff show how a section changed; ckpt_search finds text in current files or all history; ckpt_decisions lists decisions with their review state.
Sections are named by emoji (🔑), §N, number or heading text. Revisions: a commit hash, HEAD~N, before-compact, or a time such as 2026-04-01T22:00Z. Results are paged: pass next_cursor back as cursor.`

// New returns a server over the store of svc.
func New(svc *checkpoint.Service, opts Options) *Server {
	if opts.Version == "" {
		opts.Version = "(devel)"
	}
	s := &Server{svc: svc, history: history.New(svc), search: search.New(svc.Store), opts: opts}
	s.sdk = sdk.NewServer(&sdk.Implementation{Name: "ckpt", Title: "ckpt: agent checkpoint history", Version: opts.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       slog.New(slog.DiscardHandler),
	})
	s.addTools()
	s.addResources()
	return s
}

// SDK returns the underlying SDK server (tests connect to it in memory).
func (s *Server) SDK() *sdk.Server { return s.sdk }

// Serve answers requests read from r, writing responses to w, until r ends (the client
// went away) or ctx is cancelled. A client that disconnects is not an error.
func (s *Server) Serve(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &writeCloser{w: w}
	err := s.sdk.Run(ctx, &sdk.IOTransport{Reader: readCloser{r}, Writer: out})
	if err == nil || out.gone.Load() || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, sdk.ErrConnectionClosed) {
		return nil
	}
	return err
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

// writeCloser flushes after every message: the CLI hands commands a buffered stdout, and a
// response that sits in a buffer never reaches the client. A failed write means the client
// went away (a broken pipe): the end of the session, not a failure of the server.
type writeCloser struct {
	w    io.Writer
	gone atomic.Bool
}

func (c *writeCloser) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	if f, ok := c.w.(interface{ Flush() error }); ok && err == nil {
		err = f.Flush()
	}
	if err != nil {
		c.gone.Store(true)
	}
	return n, err
}

func (*writeCloser) Close() error { return nil }

// tool registers a typed handler, turning a panic into a tool error so that one bad
// request never takes the server down.
func tool[In, Out any](s *Server, t *sdk.Tool, h func(context.Context, In) (Out, error)) {
	sdk.AddTool(s.sdk, t, func(ctx context.Context, _ *sdk.CallToolRequest, in In) (res *sdk.CallToolResult, out Out, err error) {
		defer func() {
			if p := recover(); p != nil {
				var zero Out
				res, out, err = nil, zero, fmt.Errorf("internal error in %s: %v (please report it with this stack: %s)", t.Name, p, firstFrames(debug.Stack()))
			}
		}()
		out, err = h(ctx, in)
		if err != nil {
			return nil, out, toolError(err)
		}
		return nil, out, nil
	})
}

// firstFrames keeps the top of a stack trace: enough to find the bug, short enough for a
// tool result.
func firstFrames(st []byte) string {
	if len(st) > 1500 {
		st = st[:1500]
	}
	return string(st)
}
