package proctest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLeanBuildLinks: the lean build, which runs after every agent turn and inside git
// commit, links no HTTP, SSH or other network code, no web UI or MCP server and no man-page
// generator; neither build links the generator. Nor does the lean build link cgo (os/user
// did): a static binary starts without the C loader and libc.
func TestLeanBuildLinks(t *testing.T) {
	deps := func(tags string) []string {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/ckpt-dev/ckpt/cmd/ckpt").Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		return strings.Fields(string(out))
	}
	forbidden := func(pkg string, lean bool) bool {
		if strings.HasPrefix(pkg, "github.com/russross/blackfriday") || strings.HasPrefix(pkg, "github.com/cpuguy83/go-md2man") {
			return true
		}
		if !lean {
			return false
		}
		for _, p := range []string{"net/http", "crypto/tls", "golang.org/x/crypto/ssh", "github.com/go-git/go-git/v5/plumbing/transport",
			"html/template", "github.com/yuin/goldmark/extension", "github.com/modelcontextprotocol/", "github.com/ckpt-dev/ckpt/ui", "github.com/ckpt-dev/ckpt/mcp",
			"runtime/cgo", "os/user"} {
			if pkg == p || strings.HasPrefix(pkg, p+"/") || strings.HasPrefix(pkg, p) && strings.HasSuffix(p, "/") {
				return true
			}
		}
		return pkg == "github.com/go-git/go-git/v5" // registers every transport when initialised
	}
	for _, b := range []struct {
		tags string
		lean bool
	}{{leanTags, true}, {fullTags, false}} {
		for _, pkg := range deps(b.tags) {
			if forbidden(pkg, b.lean) {
				t.Errorf("build with tags %s links %s", b.tags, pkg)
			}
		}
	}
}

// TestLeanHandsOver: the lean ckpt runs ui, mcp and the go-git network by handing the whole
// command to ckpt-full beside it, help included; without ckpt-full it says what to install.
func TestLeanHandsOver(t *testing.T) {
	s := newStore(t)
	full := filepath.Join(filepath.Dir(ckptBin), "ckpt-full")
	same := func(args ...string) {
		lean, err1 := exec.Command(ckptBin, args...).CombinedOutput()
		want, err2 := exec.Command(full, args...).CombinedOutput()
		if err1 != nil || err2 != nil || !bytes.Equal(lean, want) {
			t.Errorf("ckpt %s: lean build (%v):\n%s\nfull build (%v):\n%s", strings.Join(args, " "), err1, lean, err2, want)
		}
	}
	same("--help")
	same("ui", "--help")
	same("mcp", "--help")

	// An MCP client's first request, answered through the lean binary.
	s.mustRun(t, nil, "init", "-s", "alpha")
	cmd := s.command(nil, "mcp")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(outPipe).ReadString('\n')
		answer <- line
	}()
	if _, err := in.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-answer:
		if !strings.Contains(got, `"serverInfo"`) {
			t.Errorf("ckpt mcp through the lean build answered %q", got)
		}
	case <-time.After(20 * time.Second):
		t.Error("ckpt mcp through the lean build did not answer")
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Errorf("ckpt mcp: %v", err)
	}

	// go-git's network, chosen by config: push to a file:// remote, then read it back.
	remote := filepath.Join(t.TempDir(), "remote.git")
	s.git(t, filepath.Dir(remote), "init", "-q", "--bare", remote)
	if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte("[remote]\ngit = \"go-git\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.mustRun(t, nil, "remote", "add", "origin", "file://"+remote)
	if out := s.mustRun(t, nil, "push"); !strings.HasPrefix(out, "pushed 1 to origin") {
		t.Errorf("push through go-git: %q", out)
	}
	s.git(t, remote, "rev-parse", "refs/heads/sessions/alpha")

	// Alone, the lean build names what is missing.
	alone := filepath.Join(t.TempDir(), "ckpt")
	b, err := os.ReadFile(ckptBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(alone, "ui")
	cmd.Env = append(s.env, "PATH=/nonexistent")
	got, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(got), "ckpt-full: not installed") || !strings.Contains(string(got), "hint: make install") {
		t.Errorf("lean ckpt ui without ckpt-full: %v\n%s", err, got)
	}
}
