#!/bin/sh
# Paired in-process commit benchmark: the repo package of this work tree against the repo
# package of an older revision (default: main), in one process, one commit of each in turn,
# so that both see the same machine load. Each commit is BenchmarkCommit8KB's: an 8 KB six
# checkpoint with one line changed, DefaultOptions (packing past 1,000 loose objects).
#
#   scripts/bench-commit-paired.sh [-rev REV] [-n COMMITS] [-fsync] [-dir DIR]
#
# DIR is where the two stores are made (default $TMPDIR or /tmp; /dev/shm for tmpfs). It
# prints the median and 90th percentile of each side and the median of the per-pair ratios
# new/old. -cpuprofile FILE profiles both sides (their packages are repo and ckptold/repo).
set -eu
rev=main
args=
while [ $# -gt 0 ]; do
	case $1 in
	-rev) rev=$2; shift 2 ;;
	*) args="$args $1"; shift ;;
	esac
done
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/pair"
git -C "$root" archive "$rev" | tar -x -C "$work/old"
# The old tree becomes module github.com/ckpt-dev/ckptold, so both build into one binary.
find "$work/old" \( -name '*.go' -o -name go.mod \) -exec \
	sed -i 's#github.com/ckpt-dev/ckpt\([/"]\|$\)#github.com/ckpt-dev/ckptold\1#g' {} +
cp "$root/go.sum" "$work/pair/go.sum"
cat >"$work/pair/go.mod" <<EOF
module pairbench

go 1.26.0

require (
	github.com/ckpt-dev/ckpt v0.0.0
	github.com/ckpt-dev/ckptold v0.0.0
)

replace github.com/ckpt-dev/ckpt => $root

replace github.com/ckpt-dev/ckptold => $work/old
EOF
cat >"$work/pair/main.go" <<'EOF'
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"time"

	newrepo "github.com/ckpt-dev/ckpt/repo"
	oldrepo "github.com/ckpt-dev/ckptold/repo"
)

// checkpoint8KB is repo's bench_test.go checkpoint8KB.
func checkpoint8KB(v int) []byte {
	var b bytes.Buffer
	b.WriteString("# Session Checkpoint\n\n_last_updated: 2026-04-01T22:00Z_\n_session_id: bench_\n\n---\n\n")
	heads := []string{"### 🎯 Current Task", "### 📋 Task Stack", "### ✅ This Session Completed", "### 🔑 Key Decisions", "### 📡 Recovered Delta", "### ⚠️ Notes & Blockers"}
	const lines = 17
	for s, h := range heads {
		b.WriteString(h + "\n")
		for l := range lines {
			n := s*lines + l
			rev := 0
			if n == v%(len(heads)*lines) {
				rev = v
			}
			fmt.Fprintf(&b, "- [ ] item %02d of section %d: keep `checkpoint_manager.py` in step (rev %6d)\n", l, s, rev)
		}
		b.WriteString("\n")
	}
	b.WriteString("---\n")
	return b.Bytes()
}

func message(v int) string {
	return fmt.Sprintf("checkpoint(write): update 📋 Task Stack (%d)\n\nCkpt-Session: bench\nCkpt-Trigger: write\nCkpt-Sections: 📋\n", v)
}

func files(v int) map[string][]byte {
	return map[string][]byte{"checkpoint.md": checkpoint8KB(v), "notes.md": []byte("# Notes\n")}
}

func main() {
	n := flag.Int("n", 1000, "commits on each side")
	fsync := flag.Bool("fsync", false, "fsync as DefaultOptions does")
	dir := flag.String("dir", os.TempDir(), "where the stores are made")
	profile := flag.String("cpuprofile", "", "write a CPU profile of both sides here")
	flag.Parse()
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			panic(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			panic(err)
		}
		defer pprof.StopCPUProfile()
	}
	tmp, err := os.MkdirTemp(*dir, "pairbench-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	clock := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }

	oo := oldrepo.DefaultOptions()
	oo.Fsync, oo.Now, oo.Author = *fsync, now, oldrepo.Signature{Name: "ckpt bench", Email: "bench@example.com"}
	or, _, err := oldrepo.NewStore(filepath.Join(tmp, "old"), oo).Init("bench", oldrepo.InitOptions{Files: files(0), Message: message(0)})
	if err != nil {
		panic(err)
	}
	no := newrepo.DefaultOptions()
	no.Fsync, no.Now, no.Author = *fsync, now, newrepo.Signature{Name: "ckpt bench", Email: "bench@example.com"}
	nr, _, err := newrepo.NewStore(filepath.Join(tmp, "new"), no).Init("bench", newrepo.InitOptions{Files: files(0), Message: message(0)})
	if err != nil {
		panic(err)
	}
	commitOld := func(v int) time.Duration {
		start := time.Now()
		if _, changed, err := or.Commit(oldrepo.CommitRequest{Files: files(v), Message: message(v)}); err != nil || !changed {
			panic(fmt.Sprint(changed, err))
		}
		return time.Since(start)
	}
	commitNew := func(v int) time.Duration {
		start := time.Now()
		if _, changed, err := nr.Commit(newrepo.CommitRequest{Files: files(v), Message: message(v)}); err != nil || !changed {
			panic(fmt.Sprint(changed, err))
		}
		return time.Since(start)
	}
	var olds, news []time.Duration
	var ratios []float64
	for v := 1; v <= *n; v++ {
		var o, w time.Duration
		if v%2 == 0 { // each goes first half of the time
			o, w = commitOld(v), commitNew(v)
		} else {
			w, o = commitNew(v), commitOld(v)
		}
		olds, news = append(olds, o), append(news, w)
		ratios = append(ratios, float64(w)/float64(o))
	}
	q := func(ds []time.Duration, p int) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[len(s)*p/100]
	}
	slices.Sort(ratios)
	fmt.Printf("commits=%d fsync=%v dir=%s\n", *n, *fsync, *dir)
	fmt.Printf("old  median %v  p90 %v\n", q(olds, 50), q(olds, 90))
	fmt.Printf("new  median %v  p90 %v\n", q(news, 50), q(news, 90))
	fmt.Printf("median of paired ratios new/old: %.3f\n", ratios[len(ratios)/2])
}
EOF
cd "$work/pair"
GOFLAGS=-mod=mod go run . $args
