package sync

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/sections"
)

// seedFile reads a file of the billing-migration fixture (testdata/seeds/billing), written
// for these tests: an eleven-en session whose notes, §3 and subagents exercise seed 000's
// rules one by one.
func seedFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "seeds", "billing", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSeedRulesBilling syncs the billing session once and holds each seed 000 rule to its
// result (docs/sync.md states them): golden files for the checkpoint, the session's progress
// file, MEMORY.md and the knowledge graph, then the rules one by one.
func TestSeedRulesBilling(t *testing.T) {
	ts := newTestService(t, nil)
	if err := os.MkdirAll(ts.Store.KnowledgeDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile), seedFile(t, "MEMORY.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := ts.session(t, "billing", "eleven-en", seedFile(t, "checkpoint.md"), seedFile(t, "notes.md"))
	ts.clock = ts.clock.Add(10 * time.Minute)
	tasks := filepath.Join("testdata", "seeds", "billing", "tasks", "tasks.json")
	rep, err := ts.Sync(r, Options{Mode: Full, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	cp := mustRead(t, r.WorkPath(checkpoint.File))
	progress := mustRead(t, r.WorkPath(ProgressFile))
	checkGolden(t, "billing/checkpoint.md", cp)
	checkGolden(t, "billing/checkpoint-progress.md", progress)
	checkGolden(t, "billing/MEMORY.md", mustRead(t, filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile)))
	checkGolden(t, "billing/knowledge-graph.md", mustRead(t, filepath.Join(ts.Store.KnowledgeDir(), knowledge.File)))
	doc := mustTemplate(t, ts, "eleven-en").Parse(cp)
	body := func(id sections.ID) string { return string(doc.Section(id).Body) }

	// §1 (seed 000, 1.5): the inspecting request keeps §1 and goes to §11 as a quote; the
	// committing one replaces §1, cut at 200 characters, with a paraphrase line that keeps
	// the exact values the cut took away.
	if !strings.HasPrefix(body("§1"), `> "Implement the shadow-read diff job for invoice_ledger`) || !strings.Contains(body("§1"), `..."`) ||
		!strings.Contains(body("§1"), "(paraphrase: the request goes on for ") || !strings.Contains(body("§1"), "`--since 2026-05-01 --shard eu`") {
		t.Errorf("§1:\n%s", body("§1"))
	}
	// The cut loses nothing: notes.md, the only place of the whole request, was committed
	// first (autosave), and the sync's commit sits on it.
	if rep.Autosave == nil || rep.Autosave.Commit == repo.ZeroHash {
		t.Errorf("no autosave before the cut: %+v", rep.Autosave)
	} else if notes := gittest.Git(t, r.Dir, "show", rep.Autosave.Commit.String()+":notes.md"); !strings.Contains(notes, "run it with `--since 2026-05-01 --shard eu` before the US shard\"") {
		t.Errorf("the autosave's notes.md lacks the whole request:\n%s", notes)
	}
	if !strings.Contains(body("§11"), `- "list every writer of invoice_ledger"`) {
		t.Errorf("§11 lacks the inspecting request:\n%s", body("§11"))
	}
	// §3: a real directive that says "done" stays; status lines move to §5; the D-rule
	// MEMORY.md holds reworded goes; the one it lacks stays (and is proposed).
	for _, l := range []string{"- Don't mark a migration done until the shadow-read diff is empty", "- D5: Never backfill during business hours", "- Keep answers short"} {
		if !strings.Contains(body("§3"), l) {
			t.Errorf("§3 lost %q:\n%s", l, body("§3"))
		}
	}
	for _, l := range []string{"D2:", "COMPLETE", "partially complete"} {
		if strings.Contains(body("§3"), l) {
			t.Errorf("§3 keeps %q:\n%s", l, body("§3"))
		}
	}
	if !strings.Contains(body("§5"), "- Ledger backfill for 2019 COMPLETE") || !strings.Contains(body("§5"), "- M4 partially complete (EU shard left)") {
		t.Errorf("§5 lacks the status lines:\n%s", body("§5"))
	}
	// §4 and subagent progress: marks from the block, commands byte for byte in §5,
	// findings in §7, the session's progress file.
	for _, l := range []string{
		"  - ✅ M2 Map every ledger writer (progress: tasks/M2/progress.md, last-reconciled-written-at: 4)",
		"  - 🔄 M3 Backfill 2019 invoices (progress: tasks/M3/progress.md, last-reconciled-written-at: 3)",
		"- 🔵 M4 Shadow-read diff\n",
	} {
		if !strings.Contains(body("§4"), l) {
			t.Errorf("§4 lacks %q:\n%s", l, body("§4"))
		}
	}
	for _, name := range []string{"M2", "M3"} {
		src := seedFile(t, "tasks/"+name+"/progress.md")
		cmds, _ := parseProgress(src)
		if len(cmds) == 0 || !strings.Contains(body("§5"), string(cmds)) {
			t.Errorf("§5 lacks %s's commands byte for byte:\n%s", name, body("§5"))
		}
	}
	if !strings.Contains(body("§7"), "- M2: Two writers: `billing/ledger.go:88` and `billing/refunds.go:41`") {
		t.Errorf("§7:\n%s", body("§7"))
	}
	if !strings.Contains(string(progress), "### M2: Map every ledger writer\n- written-at 4: reconciled tasks/M2/progress.md (new)\n") {
		t.Errorf("progress file:\n%s", progress)
	}
	if len(rep.Progress) != 2 || rep.Progress[0].State != "NEW" || rep.Progress[1].State != "CHANGED" {
		t.Errorf("progress report %+v", rep.Progress)
	}
	// The durable path: §10's decisions and the rule D5 wait for review; accepted, each goes
	// into MEMORY.md once, with its provenance.
	kg, err := knowledge.Load(ts.Store)
	if err != nil {
		t.Fatal(err)
	}
	var rule, decision *knowledge.Entry
	for _, e := range kg.Entries {
		switch {
		case e.Kind == knowledge.KindRule:
			rule = e
		case strings.HasPrefix(e.Text, "Shadow-read for a week"):
			decision = e
		}
	}
	if rule == nil || decision == nil || rule.State != knowledge.StatePending || len(kg.Entries) != 3 {
		t.Fatalf("knowledge graph: %d entries, rule %+v, decision %+v", len(kg.Entries), rule, decision)
	}
	for _, id := range []string{rule.ID, decision.ID, decision.ID[:6]} {
		if _, _, _, err := knowledge.Review(ts.Store, id, knowledge.StateAccepted); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, _, err := knowledge.Review(ts.Store, decision.ID, knowledge.StatePending); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := knowledge.Review(ts.Store, decision.ID, knowledge.StateAccepted); err != nil {
		t.Fatal(err)
	}
	mem := mustRead(t, filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile))
	checkGolden(t, "billing/MEMORY-accepted.md", mem)
	if strings.Count(string(mem), decision.ID) != 1 || strings.Count(string(mem), rule.ID) != 1 {
		t.Errorf("MEMORY.md holds an accepted entry twice:\n%s", mem)
	}
	gittest.Fsck(t, ts.Store.KnowledgeDir())
	gittest.Clean(t, ts.Store.KnowledgeDir())

	// The next sync: D5 is in MEMORY.md now, so it leaves §3; nothing is reconciled twice.
	ts.clock = ts.clock.Add(10 * time.Minute)
	rep, err = ts.Sync(r, Options{Mode: Full, Tasks: tasks})
	if err != nil {
		t.Fatal(err)
	}
	doc = mustTemplate(t, ts, "eleven-en").Parse(mustRead(t, r.WorkPath(checkpoint.File)))
	if strings.Contains(body("§3"), "D5:") || len(rep.Progress) != 0 {
		t.Errorf("second sync: progress %+v, §3:\n%s", rep.Progress, body("§3"))
	}
	gittest.Fsck(t, r.Dir)
	gittest.Clean(t, r.Dir)
}
