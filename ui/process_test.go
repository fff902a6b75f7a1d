package ui

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// ckptBinary builds cmd/ckpt once per test process.
func ckptBinary(tb testing.TB) string {
	tb.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ckpt-ui-bin-")
		if err != nil {
			binErr = err
			return
		}
		benchTemps = append(benchTemps, dir)
		binPath = filepath.Join(dir, "ckpt")
		if out, err := exec.Command("go", "build", "-o", binPath, "../cmd/ckpt").CombinedOutput(); err != nil {
			binErr = &buildError{err, string(out)}
		}
	})
	if binErr != nil {
		tb.Fatal(binErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

// startUI runs `ckpt --home HOME ui ARGS...` and returns the lines it printed first.
func startUI(t *testing.T, home string, lines int, args ...string) (*exec.Cmd, []string) {
	t.Helper()
	cmd := exec.Command(ckptBinary(t), append([]string{"--home", home, "ui"}, args...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	rd := bufio.NewReader(stdout)
	var out []string
	for range lines {
		l, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the output of ckpt ui: %v", err)
		}
		out = append(out, strings.TrimSuffix(l, "\n"))
	}
	go func() { _, _ = io.Copy(io.Discard, rd) }()
	return cmd, out
}

func stopUI(t *testing.T, cmd *exec.Cmd, sig os.Signal) {
	t.Helper()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ckpt ui after %v: %v, want exit 0", sig, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("ckpt ui still running 10 s after %v", sig)
	}
}

func fetch(t *testing.T, url string, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestProcess runs the real binary: the first line is the address, pages answer, a
// rebinding Host is refused, and SIGINT or SIGTERM end it cleanly with exit 0.
func TestProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ckpt")
	}
	f := newStore(t)
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		cmd, out := startUI(t, f.home, 1)
		if !regexp.MustCompile(`^http://127\.0\.0\.1:[1-9][0-9]*/$`).MatchString(out[0]) {
			t.Fatalf("first line %q, want http://127.0.0.1:PORT/", out[0])
		}
		if code, body := fetch(t, out[0]+"s/alpha/", ""); code != http.StatusOK || !strings.Contains(body, "checkpoint(full)") {
			t.Fatalf("timeline: %d\n%s", code, body)
		}
		if code, _ := fetch(t, out[0], "rebind.example:80"); code != http.StatusMisdirectedRequest {
			t.Errorf("rebinding Host: %d, want 421", code)
		}
		stopUI(t, cmd, sig)
	}
}

// TestProcessRemote: beyond loopback the second line carries the token, and nothing is
// served without it.
func TestProcessRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("builds ckpt")
	}
	f := newStore(t)
	cmd, out := startUI(t, f.home, 2, "--addr", "0.0.0.0:0", "--allow-remote")
	m := regexp.MustCompile(`^http://0\.0\.0\.0:([1-9][0-9]*)/$`).FindStringSubmatch(out[0])
	if m == nil {
		t.Fatalf("first line %q", out[0])
	}
	tok := regexp.MustCompile(`^http://0\.0\.0\.0:` + m[1] + `/\?token=([0-9a-f]{32})$`).FindStringSubmatch(out[1])
	if tok == nil {
		t.Fatalf("second line %q, want the address with ?token=", out[1])
	}
	base := "http://127.0.0.1:" + m[1] + "/"
	if code, _ := fetch(t, base, ""); code != http.StatusForbidden {
		t.Errorf("no token: %d, want 403", code)
	}
	if code, _ := fetch(t, base+"?token="+tok[1], ""); code != http.StatusSeeOther {
		t.Errorf("with the token: %d, want 303", code)
	}
	stopUI(t, cmd, os.Interrupt)
}
