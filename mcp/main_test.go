package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/repo"
	ckptsync "github.com/ckpt-dev/ckpt/sync"
)

// The tests drive a built ckpt binary through the SDK's own client over a real stdio pipe,
// as an agent's harness does.

var ckptBin string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ckpt-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp test:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ckptBin = filepath.Join(dir, "ckpt")
	build := exec.Command("go", "build", "-o", ckptBin, "github.com/ckpt-dev/ckpt/cmd/ckpt")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "mcp test: build ckpt: %v\n", err)
		return 1
	}
	return m.Run()
}

// fixture is a store built in-process, with a clock that moves a minute per commit.
type fixture struct {
	t     testing.TB
	home  string
	svc   *checkpoint.Service
	clock time.Time
	// c are alpha's commits: init, three writes, a full sync, a write.
	c []string
}

var t0 = time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)

func newFixture(t testing.TB) *fixture {
	t.Helper()
	f := &fixture{t: t, home: t.TempDir(), clock: t0}
	opts := repo.DefaultOptions()
	opts.Fsync = false
	opts.Now = func() time.Time { return f.clock }
	opts.Author = repo.Signature{Name: "ckpt test", Email: "test@example.com"}
	f.svc = checkpoint.New(repo.NewStore(f.home, opts), nil)
	return f
}

func (f *fixture) session(id, template string) *repo.Repo {
	f.t.Helper()
	r, _, err := f.svc.InitSession(repo.SessionID(id), template, "", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func (f *fixture) write(r *repo.Repo, content []byte) string {
	f.t.Helper()
	f.clock = f.clock.Add(time.Minute)
	res, err := f.svc.Write(r, checkpoint.File, content, checkpoint.CommitOptions{Trigger: checkpoint.TriggerWrite})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.Commit.String()
}

func (f *fixture) appendNotes(r *repo.Repo, text string) {
	f.t.Helper()
	p := r.WorkPath(checkpoint.NotesFile)
	b, err := os.ReadFile(p)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, text...), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) sync(r *repo.Repo) string {
	f.t.Helper()
	f.clock = f.clock.Add(time.Minute)
	rep, err := ckptsync.New(f.svc).Sync(r, ckptsync.Options{Mode: ckptsync.Full})
	if err != nil {
		f.t.Fatal(err)
	}
	return rep.Commit
}

var sixHeadings = []struct{ key, heading string }{
	{"🎯", "### 🎯 Current Task"}, {"📋", "### 📋 Task Stack"}, {"✅", "### ✅ This Session Completed"},
	{"🔑", "### 🔑 Key Decisions"}, {"📡", "### 📡 Recovered Delta\n_delta_since_last: 2026-04-01T22:00Z → 2026-04-01T22:00Z_"},
	{"⚠️", "### ⚠️ Notes & Blockers"},
}

func six(bodies map[string]string) []byte {
	var b strings.Builder
	b.WriteString("# Session Checkpoint\n\n_last_updated: 2026-04-01T22:00Z_\n_session_id: x_\n\n---\n\n")
	for _, h := range sixHeadings {
		b.WriteString(h.heading + "\n")
		if body := bodies[h.key]; body != "" {
			b.WriteString(body + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString("---\n")
	return []byte(b.String())
}

// store builds session alpha (a short history with a full sync), session big (a checkpoint
// of about 200 KB rewritten once) and session eleven.
func store(t testing.TB) *fixture {
	f := newFixture(t)
	r := f.session("alpha", "six")
	head, _ := r.Head()
	f.c = append(f.c, head.String())
	f.c = append(f.c, f.write(r, six(map[string]string{"🎯": "Task A", "🔑": "- D1: use xxhash"})))
	f.c = append(f.c, f.write(r, six(map[string]string{"🎯": "Task A", "📋": "- [ ] one\n- [ ] two", "🔑": "- D1: use xxhash"})))
	f.c = append(f.c, f.write(r, six(map[string]string{"🎯": "Task A", "📋": "- [ ] one\n- [ ] two", "🔑": "- D1: use xxhash\n- D2: keep notes append-only"})))
	f.appendNotes(r, "- [decision] D3: blame walks first parents\n")
	f.c = append(f.c, f.sync(r))
	cp, err := os.ReadFile(r.WorkPath(checkpoint.File))
	if err != nil {
		t.Fatal(err)
	}
	f.c = append(f.c, f.write(r, []byte(strings.Replace(string(cp), "Task A", "Task B", 1))))

	big := f.session("big", "six")
	f.write(big, six(map[string]string{"🎯": "Big", "⚠️": bigBody("old")}))
	f.write(big, six(map[string]string{"🎯": "Big", "⚠️": bigBody("new")}))

	f.session("eleven", "eleven-en")
	return f
}

// bigBody is about 200 KB of notes, every line carrying tag.
func bigBody(tag string) string {
	var b strings.Builder
	for i := range 2500 {
		fmt.Fprintf(&b, "- note %04d (%s): the staging database answers slowly after a deploy\n", i, tag)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// server starts `ckpt mcp` on the fixture's store and connects the SDK's client to it.
func (f *fixture) server(t testing.TB, args ...string) *sdk.ClientSession {
	t.Helper()
	cmd := exec.Command(ckptBin, append([]string{"--home", f.home, "mcp"}, args...)...)
	cmd.Env = append(os.Environ(), "CKPT_LOCK_TIMEOUT=300ms", "NO_COLOR=1")
	cmd.Stderr = os.Stderr
	c := sdk.NewClient(&sdk.Implementation{Name: "ckpt-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; it returns the result so
// errors can be checked.
func call(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	if out != nil && !res.IsError {
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: decode %s: %v", name, b, err)
		}
	}
	return res
}

// mustCall is call for a call that must succeed.
func mustCall(t testing.TB, cs *sdk.ClientSession, name string, args map[string]any, out any) {
	t.Helper()
	if res := call(t, cs, name, args, out); res.IsError {
		t.Fatalf("%s %v: tool error: %s", name, args, text(res))
	}
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
