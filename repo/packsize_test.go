package repo

import (
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/internal/gittest"
)

// sixCheckpoint is version v of a six checkpoint of about size bytes: the template's
// headings, _last_updated_ on line 3 changing with every version (as an agent's writes make
// it), and one line of the body that version v changes, anywhere in the file (lines 7,919
// apart from one version to the next), the small edit an agent makes between two writes. The lines are varied enough to compress as
// prose does.
func sixCheckpoint(size, v int) []byte {
	b := sixLines(size, max(1, size/80/6), v)
	if len(b) < size { // the lines came out longer than guessed: as many as fill size
		b = sixLines(size, max(1, size/80/6)*size/len(b)+1, v)
	}
	return b
}

func sixLines(size, perSection, v int) []byte {
	words := strings.Fields("keep the checkpoint manager in step with notes routing spill files task stack decisions merge driver transcript delta review promote knowledge graph budget literal section heading remote push pull clone fsync index pack reflog lock")
	heads := []string{"### 🎯 Current Task", "### 📋 Task Stack", "### ✅ This Session Completed", "### 🔑 Key Decisions", "### 📡 Recovered Delta", "### ⚠️ Notes & Blockers"}
	total := perSection * len(heads)
	var b strings.Builder
	fmt.Fprintf(&b, "# Session Checkpoint\n\n_last_updated: 2026-04-01T%02d:%02dZ_\n_session_id: bench_\n\n---\n\n", 8+v/60%16, v%60)
	for s, h := range heads {
		b.WriteString(h + "\n")
		for l := range perSection {
			n := s*perSection + l
			rev := 0
			if v > 0 && n == (v-1)*7919%total {
				rev = v
			}
			hs := fnv.New32a()
			fmt.Fprintf(hs, "%d", n)
			x := hs.Sum32()
			fmt.Fprintf(&b, "- [ ] (P%d) item %04d: %s %s %s %s %s (rev %d)\n", x%3, n,
				words[x%uint32(len(words))], words[(x>>5)%uint32(len(words))], words[(x>>10)%uint32(len(words))],
				words[(x>>15)%uint32(len(words))], words[(x>>20)%uint32(len(words))], rev)
		}
		b.WriteString("\n")
	}
	b.WriteString("---\n")
	return []byte(b.String())
}

// sessionHistory makes session "bench" with commits versions of a six checkpoint of about
// size bytes (and an unchanging notes.md), fsync off.
func sessionHistory(tb testing.TB, st *Store, size, commits int) *Repo {
	tb.Helper()
	files := func(v int) map[string][]byte {
		return map[string][]byte{"checkpoint.md": sixCheckpoint(size, v), "notes.md": []byte("# Notes\n\n- [note] keep notes short\n")}
	}
	r, _, err := st.Init("bench", InitOptions{Files: files(0), Config: map[string]string{"template": "six"}, Message: benchMessage(0)})
	if err != nil {
		tb.Fatal(err)
	}
	for v := 1; v < commits; v++ {
		if _, changed, err := r.Commit(CommitRequest{Files: files(v), Message: benchMessage(v)}); err != nil || !changed {
			tb.Fatalf("commit %d: changed=%v, %v", v, changed, err)
		}
	}
	return r
}

// packBytes is the size of the pack files of a git directory.
func packBytes(tb testing.TB, gitDir string) int64 {
	tb.Helper()
	packs, err := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "*.pack"))
	if err != nil {
		tb.Fatal(err)
	}
	var n int64
	for _, p := range packs {
		fi, err := os.Stat(p)
		if err != nil {
			tb.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

// TestCopyHistoryDeltas: the pack a push or clone copies holds each version of a checkpoint
// as a delta against another, although every version changes _last_updated_ near the top
// and one line further down: 40 versions of a 364 KB checkpoint take little more than one.
func TestCopyHistoryDeltas(t *testing.T) {
	st := testStore(t)
	r := sessionHistory(t, st, 364<<10, 40)
	head := mustHead(t, r)
	tr, err := st.Transport()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CopyHistory(r, tr, head); err != nil {
		t.Fatal(err)
	}
	one := sixCheckpoint(364<<10, 0)
	got := packBytes(t, tr.GitDir)
	// One version compresses to about a fifth of its size; 39 more as whole objects would
	// make the pack forty times that.
	if limit := int64(len(one)) / 2; got > limit {
		t.Errorf("transport pack of 40 versions of a %d-byte checkpoint: %d bytes, want at most %d", len(one), got, limit)
	}
	c, err := st.Materialize("clone", tr, head, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := packBytes(t, c.GitDir); got > int64(len(one))/2 {
		t.Errorf("cloned pack: %d bytes, want at most %d", got, len(one)/2)
	}
	if b, err := c.ReadFile(head, "checkpoint.md"); err != nil || string(b) != string(sixCheckpoint(364<<10, 39)) {
		t.Errorf("the clone's checkpoint.md is not the last version (%v)", err)
	}
	// git reads every object of both packs back (the transport's HEAD is unborn: notices).
	if err := tr.SetRef(SessionRefPrefix+"bench", head); err != nil {
		t.Fatal(err)
	}
	if out, err := gittest.Run(t, tr.GitDir, "fsck", "--full", "--strict", "--no-dangling"); err != nil || strings.Contains(out, "error") {
		t.Errorf("git fsck of the transport: %v\n%s", err, out)
	}
	gittest.Fsck(t, c.Dir)
}

// BenchmarkPackVsGit measures the pack a push (the transport copy) and a clone (a session
// materialized from the transport) make of a session history, against the pack `git repack
// -adf` makes of a copy of the same session, in the same run: 40 commits of a six checkpoint
// of 8 KB and of 364 KB, each changing _last_updated_ and one line. Target: push and clone
// packs ≤ 1.2 × git's. The build and git run before the timed loop, which only reads the
// sizes.
func BenchmarkPackVsGit(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	for _, size := range []int{8 << 10, 364 << 10} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) {
			st := benchStore(b, false)
			r := sessionHistory(b, st, size, 40)
			head := mustHead(b, r)
			tr, err := st.Transport()
			if err != nil {
				b.Fatal(err)
			}
			start := time.Now()
			n, err := CopyHistory(r, tr, head)
			if err != nil {
				b.Fatal(err)
			}
			pushTook := time.Since(start)
			start = time.Now()
			c, err := st.Materialize("clone", tr, head, nil)
			if err != nil {
				b.Fatal(err)
			}
			cloneTook := time.Since(start)
			cp := filepath.Join(b.TempDir(), "copy")
			copyDir(b, r.Dir, cp)
			cmd := exec.Command("git", "-C", cp, "repack", "-adfq")
			cmd.Env = benchGitEnv(b)
			start = time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("git repack -adf: %v\n%s", err, out)
			}
			gitTook := time.Since(start)
			var push, clone, git int64
			for b.Loop() {
				push, clone, git = packBytes(b, tr.GitDir), packBytes(b, c.GitDir), packBytes(b, filepath.Join(cp, ".git"))
			}
			b.ReportMetric(float64(push), "push-bytes")
			b.ReportMetric(float64(clone), "clone-bytes")
			b.ReportMetric(float64(git), "git-bytes")
			b.ReportMetric(float64(push)/float64(git), "push-ratio")
			b.ReportMetric(float64(clone)/float64(git), "clone-ratio")
			b.Logf("%d objects, checkpoint %d bytes: push pack %d B (%s), clone pack %d B (%s), git repack -adf %d B (%s)",
				n, len(sixCheckpoint(size, 0)), push, pushTook.Round(time.Millisecond), clone, cloneTook.Round(time.Millisecond), git, gitTook.Round(time.Millisecond))
		})
	}
}
