package sync

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/delta"
	"github.com/ckpt-dev/ckpt/sections"
)

// bigSix is a six checkpoint of about size bytes: the corpus checkpoint with every list
// section grown by realistic items.
func bigSix(size int) []byte {
	src := string(corpusFile(nil, "six/checkpoint.md"))
	heads := []string{"### 📋 Task Stack\n", "### ✅ This Session Completed\n", "### 🔑 Key Decisions\n", "### ⚠️ Notes & Blockers\n"}
	per := (size - len(src)) / len(heads)
	for i, h := range heads {
		var b strings.Builder
		for j := 0; b.Len() < per; j++ {
			fmt.Fprintf(&b, "- item %d of section %d: checkpoint text with `code_%d` and a path /srv/app/%d/config.toml\n", j, i, j, j)
		}
		src = strings.Replace(src, h, h+b.String(), 1)
	}
	return []byte(src)
}

func benchNotes(n int) []byte {
	tags := []string{"[decision] ", "[task] ", "[done] ", "[blocker] ", "[note] ", ""}
	var b strings.Builder
	b.WriteString("# Notes\n\n_Append one entry per line. `ckpt sync` routes every entry into the checkpoint and resets this file._\n\n")
	for i := range n {
		fmt.Fprintf(&b, "- %snote %d mentions `KEY_%d=value-%d` and https://example.com/%d\n", tags[i%len(tags)], i, i, i, i)
	}
	return []byte(b.String())
}

// BenchmarkFullSync200KB1000Notes is the target: a full sync (routing, literals,
// budgets and spills, check, commit, promotion) of a 200 KB checkpoint with 1,000 notes.
func BenchmarkFullSync200KB1000Notes(b *testing.B) {
	ts := newTestService(b, nil)
	cp := bigSix(200 << 10)
	notes := benchNotes(1000)
	r := ts.session(b, "bench", "six", cp, nil)
	var spilled int
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		os.WriteFile(r.WorkPath(checkpoint.File), cp, 0o644)
		os.WriteFile(r.WorkPath(checkpoint.NotesFile), notes, 0o644)
		for _, f := range []string{"checkpoint-decisions.md", "checkpoint-completed.md", "checkpoint-notes.md"} {
			os.Remove(r.WorkPath(f))
		}
		ts.clock = ts.clock.Add(time.Minute)
		b.StartTimer()
		rep, err := ts.Sync(r, Options{Mode: Full})
		if err != nil {
			b.Fatal(err)
		}
		spilled = len(rep.Spills)
	}
	b.ReportMetric(float64(spilled), "spills")
}

// BenchmarkMergeFull200KB1000Notes times the pure merge alone, without git.
func BenchmarkMergeFull200KB1000Notes(b *testing.B) {
	tt := &checkpoint.Template{Template: mustLoad(b, "six")}
	tt.Doc = sections.Parse(tt.Source, sections.Options{})
	cp := bigSix(200 << 10)
	notes := benchNotes(1000)
	b.ReportAllocs()
	for b.Loop() {
		doc := tt.Parse(cp)
		ed := newEditor(doc, "")
		files := map[string][]byte{checkpoint.NotesFile: notes}
		mergeFull(tt, ed, nil, files, nil, nil, nil, tt.Spec.Budgets, "bench", &Report{})
		_ = doc.Render()
	}
}

// BenchmarkSparseSync50MBTranscript is the sparse target: a session following a 50 MB
// transcript that grew by 100 KB since the last sync. Sparse reads only the new bytes.
func BenchmarkSparseSync50MBTranscript(b *testing.B) {
	ts := newTestService(b, nil)
	r := ts.session(b, "sparse", "six", corpusFile(b, "six/checkpoint.md"), nil)
	path := b.TempDir() + "/transcript.jsonl"
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	line := func(i int, at time.Time) string {
		return fmt.Sprintf(`{"type":"assistant","timestamp":%q,"message":{"role":"assistant","content":[{"type":"text","text":"step %d: %s"}]}}`+"\n",
			at.Format(time.RFC3339), i, strings.Repeat("reading files and running tests ", 8))
	}
	at := ts.clock.Add(-24 * time.Hour)
	written := 0
	for i := 0; written < 50<<20; i++ {
		n, _ := f.WriteString(line(i, at))
		written += n
	}
	f.Close()
	// The session has followed the transcript so far: its offset is at the end. (A first
	// sync would read all 50 MB, and its memory would hide the sparse sync's.)
	if err := delta.SaveState(ts.Store, r.ID, delta.State{}.Follow(path, int64(written))); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		ts.clock = ts.clock.Add(time.Minute)
		f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		for grown := 0; grown < 100<<10; {
			n, _ := f.WriteString(line(i, ts.clock.Add(-time.Second)))
			grown += n
		}
		f.Close()
		b.StartTimer()
		rep, err := ts.Sync(r, Options{Mode: Sparse})
		if err != nil || rep.Delta.Entries == 0 {
			b.Fatalf("sparse sync: %v, %+v", err, rep)
		}
	}
	b.StopTimer()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-rss-MB")
	}
}

// BenchmarkFullSyncTaskChain20000 is issue 13's target: a full sync whose task database is
// one chain 20,000 tasks deep renders it in under a second (it took over 60 s when every
// level was indented: a 400 MB section).
func BenchmarkFullSyncTaskChain20000(b *testing.B) {
	ts := newTestService(b, nil)
	r := ts.session(b, "deep", "eleven-en", nil, nil)
	raw, err := json.Marshal(taskChain(20000))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "tasks.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		b.Fatal(err)
	}
	empty, err := os.ReadFile(r.WorkPath(checkpoint.File))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		os.WriteFile(r.WorkPath(checkpoint.File), empty, 0o644)
		ts.clock = ts.clock.Add(time.Minute)
		b.StartTimer()
		if _, err := ts.Sync(r, Options{Mode: Full, Tasks: path, AllowShrink: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderTaskChain20000 renders the same chain alone.
func BenchmarkRenderTaskChain20000(b *testing.B) {
	db := taskChain(20000)
	b.ReportAllocs()
	for b.Loop() {
		renderTasks(db, nil, false, nil)
	}
}
