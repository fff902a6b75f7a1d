package proctest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPackMergeKeepsGitReadable writes checkpoints (notes.md unchanged, as it usually is)
// until ckpt has packed its loose objects more than eight times and merged the packs into
// one, then asks git to read everything. The merge must not write an object twice: a pack
// whose header counts more objects than its index holds is unreadable for git ("packfile
// claims to have N objects while index indicates M objects"), and `git log` then fails
// with "bad object HEAD".
func TestPackMergeKeepsGitReadable(t *testing.T) {
	s := newStore(t)
	// The lowest threshold packs after about every 20 commits (ckpt estimates the loose
	// count from four fan-out directories); fsync off keeps the test short.
	if err := os.WriteFile(filepath.Join(s.home, "config.toml"), []byte("[core]\npack_threshold = 1\nfsync = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const id = "pack"
	s.mustRun(t, nil, "init", "-s", id)
	dir := s.sessionDir(id)
	packDir := filepath.Join(dir, ".git", "objects", "pack")
	countPacks := func() int {
		ps, _ := filepath.Glob(filepath.Join(packDir, "*.pack"))
		return len(ps)
	}

	start := time.Now()
	var written [][]byte
	most, merged := 0, false
	for i := 0; i < 1500 && !merged; i++ {
		c := checkpoint(fmt.Sprintf("Pack test write %d", i))
		s.mustRun(t, c, "write", "-s", id)
		written = append(written, c)
		n := countPacks()
		merged = n < most
		most = max(most, n)
	}
	if !merged {
		t.Fatalf("%d writes never merged packs (at most %d packs): the test proved nothing", len(written), most)
	}
	t.Logf("%d writes in %s: %d packs merged into %d", len(written), time.Since(start).Round(time.Millisecond), most+1, countPacks())

	s.requireHealthy(t, dir)
	if n, _ := strconv.Atoi(strings.TrimSpace(s.git(t, dir, "rev-list", "--count", "main"))); n != len(written)+1 {
		t.Errorf("git rev-list --count main = %d, want %d", n, len(written)+1)
	}
	s.requireInHistory(t, dir, written)
}
