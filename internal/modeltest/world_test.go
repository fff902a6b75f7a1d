package modeltest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// sessionID is the one session every home holds.
const sessionID = "m1"

// home is one ckpt store (CKPT_HOME) with the transcript its agent writes.
type home struct {
	name       string // "a" or "b"
	dir        string
	transcript string // JSONL, outside the store
	tlines     int    // transcript records written so far
	tpending   string // the rest of a half-written last line
}

func (h *home) session() string   { return filepath.Join(h.dir, "sessions", sessionID) }
func (h *home) knowledge() string { return filepath.Join(h.dir, "knowledge") }
func (h *home) file(name string) string {
	return filepath.Join(h.session(), name)
}

// token is one unique string the agent, the harness or a write's stdin put somewhere.
type token struct {
	s    string
	step int    // the step that wrote it
	home string // where
	what string // what wrote it, for the report
	// mayVanish: the string was only given on stdin to a ckpt write that was killed. ckpt
	// never reported it stored, so it may be absent; nothing else may.
	mayVanish bool
	seen      string // where the last check found it
}

// world is one sequence being run: its homes, remote, clock and tokens.
type world struct {
	seq    *sequence
	dir    string
	env    []string // without CKPT_HOME and CKPT_NOW
	homes  []*home
	remote string // the bare repository both homes push to; "" with one home
	now    time.Time
	step   int

	mu     sync.Mutex
	tokens []*token
	ntok   int

	blobs  map[string]string  // blob id -> content, read once
	scan   map[string]scanned // repository -> its blobs at a fingerprint
	fscked map[string]string  // repository -> fingerprint of its last clean fsck
	heads  map[string][]byte  // "<commit>:<file>" -> content, read once
	log    []string           // the operations so far, with their outcomes
	stats  *stats
}

type scanned struct {
	fingerprint string
	blobs       []string
}

// newWorld makes the directories and environment of a sequence.
func newWorld(seq *sequence, dir string, st *stats) (*world, error) {
	gitHome := filepath.Join(dir, "githome")
	if err := os.MkdirAll(gitHome, 0o755); err != nil {
		return nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "CKPT_"), strings.HasPrefix(k, "GIT_"),
			k == "HOME", k == "XDG_CONFIG_HOME", k == "NO_COLOR", k == "CLICOLOR_FORCE":
			continue
		}
		env = append(env, kv)
	}
	// As internal/proctest: a HOME of its own, no global or system git configuration, a
	// lock timeout long enough that only a real deadlock exits 4.
	env = append(env,
		"CKPT_LOCK_TIMEOUT=30s",
		"CKPT_AUTHOR_NAME=ckpt model", "CKPT_AUTHOR_EMAIL=model@example.com",
		"NO_COLOR=1",
		"HOME="+gitHome,
		"XDG_CONFIG_HOME="+gitHome,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=test", "GIT_COMMITTER_EMAIL=test@example.com",
	)
	w := &world{seq: seq, dir: dir, env: env, now: epoch, blobs: map[string]string{},
		scan: map[string]scanned{}, fscked: map[string]string{}, heads: map[string][]byte{}, stats: st}
	for i := range seq.homes {
		name := string(rune('a' + i))
		w.homes = append(w.homes, &home{name: name, dir: filepath.Join(dir, name), transcript: filepath.Join(dir, name+"-transcript.jsonl")})
	}
	return w, nil
}

// config is the config.toml of every home of the sequence.
func (w *world) config() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "[core]\nfsync = %v\n", w.seq.fsync)
	if w.seq.packThreshold > 0 {
		fmt.Fprintf(&b, "pack_threshold = %d\n", w.seq.packThreshold)
	}
	if w.seq.lowBudgets {
		// Small budgets make sync spill sections into checkpoint-<topic>.md.
		if w.seq.tmpl == six {
			b.WriteString("\n[budgets.six]\n\"📋\" = 300\n\"✅\" = 300\n\"🔑\" = 300\n\"⚠️\" = 300\n")
		} else {
			b.WriteString("\n[budgets.eleven-en]\n\"§5\" = 300\n\"§7\" = 300\n\"§8\" = 300\n\"§10\" = 300\n\"§11\" = 300\n")
		}
	}
	return []byte(b.String())
}

// result is how one ckpt process ended.
type result struct {
	args           []string
	code           int // -1 when killed
	killed         bool
	stdout, stderr string
	took           time.Duration
}

func (r result) short() string {
	if r.killed {
		return fmt.Sprintf("killed after %s", r.took.Round(100*time.Microsecond))
	}
	return fmt.Sprintf("exit %d in %s", r.code, r.took.Round(100*time.Microsecond))
}

func (r result) full() string {
	return fmt.Sprintf("ckpt %s: %s\nstdout:\n%sstderr:\n%s", strings.Join(r.args, " "), r.short(), indent(r.stdout), indent(r.stderr))
}

func indent(s string) string {
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ") + "\n"
}

// ckpt runs the real binary in home h at the model's clock. With o.kill it is sent SIGKILL
// after o.killAfter; with o.conc the agent appends that many notes entries while it runs
// (their tokens are registered before this returns).
func (w *world) ckpt(h *home, o *op, stdin []byte, args ...string) (result, error) {
	cmd := exec.Command(ckptBin, args...)
	cmd.Env = append(w.env[:len(w.env):len(w.env)], "CKPT_HOME="+h.dir, "CKPT_NOW="+w.now.Format(time.RFC3339))
	cmd.Dir = w.dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return result{}, err
	}
	var timer *time.Timer
	if o != nil && o.kill {
		// The whole process group: ckpt and the git it may have started (push, pull), as
		// when the agent's session dies. An orphaned git push would otherwise go on
		// writing into the remote while the next step looks at it.
		pid := cmd.Process.Pid
		timer = time.AfterFunc(o.killAfter, func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	}
	// A command that runs for a minute is stuck (the lock timeout is 30 s): kill it and
	// say so, rather than let the test hang until go test's own timeout.
	var hung atomic.Bool
	watchdog := time.AfterFunc(time.Minute, func() {
		hung.Store(true)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	defer watchdog.Stop()
	var wg sync.WaitGroup
	var appendErr error
	if o != nil && o.conc > 0 {
		wg.Go(func() {
			for i := range o.conc {
				if i > 0 {
					time.Sleep(o.concGap)
				}
				if err := w.appendNote(h, o.concStyle[i], "agent entry appended while ckpt "+args[0]+" ran"); err != nil {
					appendErr = err
					return
				}
			}
		})
	}
	err := cmd.Wait()
	watchdog.Stop()
	r := result{args: args, took: time.Since(began), stdout: out.String(), stderr: errb.String()}
	if hung.Load() {
		return r, fmt.Errorf("ckpt %s did not end within a minute; killed\n%s", strings.Join(args, " "), r.full())
	}
	w.stats.add(func(s *stats) { s.ckptTime += r.took })
	if timer != nil {
		timer.Stop()
	}
	wg.Wait()
	if appendErr != nil {
		return r, appendErr
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return r, err
		}
		r.code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.killed, r.code = ws.Signal() == syscall.SIGKILL, -1
		}
	}
	if r.killed {
		w.stats.add(func(s *stats) { s.kills++ })
		if err := w.ageLocks(h); err != nil {
			return r, err
		}
	}
	return r, nil
}

// ageLocks makes every lock file a killed process left look older than ckpt's stale-lock
// age (2 s), as if the next command came a few seconds later. The model clock already
// says time passes between operations; this says it to the file system without sleeping.
// ckpt still has to find, judge and remove the lock itself.
func (w *world) ageLocks(h *home) error {
	old := time.Now().Add(-5 * time.Second)
	return filepath.WalkDir(h.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".lock") && !strings.Contains(p, string(filepath.Separator)+"locks"+string(filepath.Separator)) {
			if err := os.Chtimes(p, old, old); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	})
}

// git runs the git CLI in dir.
func (w *world) git(dir string, stdin []byte, args ...string) (string, error) {
	w.stats.add(func(s *stats) { s.gits++ })
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = w.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git -C %s %s: %v\n%s%s", dir, strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}

// newToken makes a unique token: "mt<seed>-<step>-<n>z". The final z keeps one token from
// being a prefix of another.
func (w *world) newToken() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ntok++
	return fmt.Sprintf("mt%d-%d-%dz", w.seq.seed, w.step, w.ntok)
}

func (w *world) register(h *home, what string, mayVanish bool, keep ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range keep {
		w.tokens = append(w.tokens, &token{s: k, step: w.step, home: h.name, what: what, mayVanish: mayVanish})
	}
}

// appendNote is the agent writing one entry to notes.md: open with O_APPEND, one write,
// close, as an agent's file tool does. Its strings are registered before the write.
func (w *world) appendNote(h *home, s style, what string) error {
	text, keep := entry(s, w.newToken(), w.newToken())
	w.register(h, fmt.Sprintf("%s: %q", what, text), false, keep...)
	f, err := os.OpenFile(h.file("notes.md"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(text + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// headFile is a file of main's tree, read with git (nil when main or the file is missing).
func (w *world) headFile(h *home, name string) []byte {
	main := mainCommit(filepath.Join(h.session(), ".git"))
	key := main + ":" + name
	if b, ok := w.heads[key]; ok && main != "" {
		return b
	}
	out, err := w.git(h.session(), nil, "cat-file", "blob", "main:"+name)
	if err != nil {
		return nil
	}
	if main != "" {
		w.heads[key] = []byte(out)
	}
	return []byte(out)
}

// mainCommit reads refs/heads/main the way git does (the loose ref, else packed-refs),
// to spare a git process; "" when it cannot tell.
func mainCommit(gitDir string) string {
	if b, err := os.ReadFile(filepath.Join(gitDir, "refs", "heads", "main")); err == nil {
		if id := strings.TrimSpace(string(b)); len(id) == 40 {
			return id
		}
		return ""
	}
	b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(string(b), "\n") {
		if id, ref, ok := strings.Cut(l, " "); ok && ref == "refs/heads/main" && len(id) == 40 {
			return id
		}
	}
	return ""
}

// transcriptLines appends n records in Claude Code's shape to h's transcript, each a
// little before the model clock; with partial, the last is left without its newline
// (the agent is still writing it) and finished by the next call.
func (w *world) transcriptLines(h *home, n int, partial bool) error {
	var b strings.Builder
	b.WriteString(h.tpending)
	h.tpending = ""
	for i := range n {
		h.tlines++
		k := h.tlines
		ts := w.now.Add(-time.Duration(n-i) * 7 * time.Second).Add(123 * time.Millisecond).Format("2006-01-02T15:04:05.000Z")
		var line string
		switch k % 4 {
		case 1:
			line = fmt.Sprintf(`{"type":"user","uuid":"u%d","parentUuid":"a%d","sessionId":"model-%d","timestamp":"%s","cwd":"/home/dev/proj","message":{"role":"user","content":"Please look at part %d of the report"}}`, k, k-1, w.seq.seed, ts, k)
		case 2:
			line = fmt.Sprintf(`{"type":"assistant","uuid":"a%d","parentUuid":"u%d","sessionId":"model-%d","timestamp":"%s","message":{"role":"assistant","model":"some-model","content":[{"type":"thinking","thinking":"step %d"},{"type":"text","text":"Ran the checks for part %d."},{"type":"tool_use","id":"t%d","name":"Bash","input":{"command":"make test"}}]}}`, k, k-1, w.seq.seed, ts, k, k, k)
		case 3:
			line = fmt.Sprintf(`{"type":"user","uuid":"u%d","parentUuid":"a%d","sessionId":"model-%d","timestamp":"%s","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"ok\n"}]}}`, k, k-1, w.seq.seed, ts, k-1)
		default:
			line = fmt.Sprintf(`{"type":"assistant","uuid":"a%d","parentUuid":"u%d","sessionId":"model-%d","timestamp":"%s","message":{"role":"assistant","content":[{"type":"text","text":"Part %d is done; moving on."}]}}`, k, k-1, w.seq.seed, ts, k)
		}
		if partial && i == n-1 {
			cut := len(line) / 2
			b.WriteString(line[:cut])
			h.tpending = line[cut:] + "\n"
			break
		}
		b.WriteString(line + "\n")
	}
	f, err := os.OpenFile(h.transcript, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
