package sync

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/internal/config"
	"github.com/ckpt-dev/ckpt/internal/gittest"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/sections"
)

func writeFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o644) }

func TestPromotionAcrossSessionsAndReview(t *testing.T) {
	ts := newTestService(t, nil)
	a := ts.session(t, "a", "six", corpusFile(t, "six/checkpoint.md"), nil)
	b := ts.session(t, "b", "six", corpusFile(t, "six/checkpoint.md"), nil)
	if _, err := ts.Sync(a, Options{Mode: Full}); err != nil {
		t.Fatal(err)
	}
	rep, err := ts.Sync(b, Options{Mode: Full})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Promotions {
		if p.Outcome != "provenance" {
			t.Errorf("the same decision from session b: outcome %s, want provenance", p.Outcome)
		}
	}
	kg, _ := knowledge.Load(ts.Store)
	if len(kg.Entries) != 2 {
		t.Fatalf("%d entries, want 2 (duplicates are one entry)", len(kg.Entries))
	}
	for _, e := range kg.Entries {
		if len(e.Provenance) != 2 || e.Provenance[0].Session != "a" || e.Provenance[1].Session != "b" {
			t.Errorf("%s provenance = %+v", e.ID, e.Provenance)
		}
	}
	// accept one, reject the other; the rejected one never comes back
	acc, rej := kg.Entries[0].ID, kg.Entries[1].ID
	if _, _, changed, err := knowledge.Review(ts.Store, acc, knowledge.StateAccepted); err != nil || !changed {
		t.Fatal(err)
	}
	if _, _, changed, err := knowledge.Review(ts.Store, rej[:6], knowledge.StateRejected); err != nil || !changed {
		t.Fatalf("reject by prefix: %v", err)
	}
	if _, _, changed, _ := knowledge.Review(ts.Store, rej, knowledge.StateRejected); changed {
		t.Errorf("rejecting twice changed something")
	}
	c := ts.session(t, "c", "six", corpusFile(t, "six/checkpoint.md"), nil)
	rep, err = ts.Sync(c, Options{Mode: Full})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := map[string]string{}
	for _, p := range rep.Promotions {
		outcomes[p.ID] = p.Outcome
	}
	if outcomes[rej] != "rejected" || outcomes[acc] != "provenance" {
		t.Errorf("promotion outcomes from session c = %v", outcomes)
	}
	kg, _ = knowledge.Load(ts.Store)
	for _, e := range kg.Entries {
		if e.ID == rej && (e.State != knowledge.StateRejected || len(e.Provenance) != 2) {
			t.Errorf("a rejected decision was promoted again: %+v", e)
		}
		if e.ID == acc && (e.State != knowledge.StateAccepted || len(e.Provenance) != 3) {
			t.Errorf("accepted entry = %+v", e)
		}
	}
	log := strings.Count(gittest.Git(t, ts.Store.KnowledgeDir(), "log", "--format=%s"), "\n")
	if log < 5 {
		t.Errorf("knowledge log has %d commits", log)
	}
	g, err := kg.Diagram("mermaid")
	if err != nil || !strings.Contains(g, "s_a --> "+strings.ReplaceAll(acc, "-", "_")) || strings.Contains(g, strings.ReplaceAll(rej, "-", "_")) {
		t.Errorf("mermaid graph:\n%s", g)
	}
	d, err := kg.Diagram("dot")
	if err != nil || !strings.HasPrefix(d, "digraph knowledge {") || !strings.Contains(d, "s_c -> ") {
		t.Errorf("dot graph:\n%s", d)
	}
	if _, err := kg.Diagram("svg"); err == nil {
		t.Errorf("unknown graph format accepted")
	}
}

func TestPromotionWithoutReview(t *testing.T) {
	off := false
	cfg := &config.Config{}
	cfg.Promote.Review = &off
	ts := newTestService(t, cfg)
	a := ts.session(t, "a", "eleven", corpusFile(t, "eleven/checkpoint.md"), nil)
	if _, err := ts.Sync(a, Options{Mode: Full}); err != nil {
		t.Fatal(err)
	}
	kg, _ := knowledge.Load(ts.Store)
	// The §10 decision, and the §3 rule D3 that MEMORY.md (none yet) lacks: both accepted
	// at once, and so both in MEMORY.md at once.
	if len(kg.Entries) != 2 || kg.Entries[0].State != knowledge.StateAccepted || kg.Entries[0].Kind != knowledge.KindDecision ||
		kg.Entries[1].State != knowledge.StateAccepted || kg.Entries[1].Kind != knowledge.KindRule {
		t.Fatalf("entries = %+v %+v, want an accepted decision and an accepted rule", kg.Entries[0], kg.Entries[len(kg.Entries)-1])
	}
	mem, err := os.ReadFile(filepath.Join(ts.Store.KnowledgeDir(), knowledge.MemoryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mem), "## 规则\n- D3: 不要用 try/catch —— 使用提前返回 ("+kg.Entries[1].ID+"; from a @ ") ||
		!strings.Contains(string(mem), "## 架构决策\n- 决定按 §N 编号而不是标题文字识别章节，因为标题可能被翻译 ("+kg.Entries[0].ID+"; from a @ ") {
		t.Errorf("MEMORY.md:\n%s", mem)
	}
}

func TestSessionDecisionsIncludeSpilled(t *testing.T) {
	six := &checkpoint.Template{Template: mustLoad(t, "six")}
	six.Doc = sections.Parse(six.Source, sections.Options{})
	cp := strings.Replace(string(six.Source), "### 🔑 Key Decisions\n", "### 🔑 Key Decisions\n- See checkpoint-decisions.md (3 items) - a\n- d: still here\n", 1)
	spill := "# Key Decisions (spilled)\n\n_Older entries, oldest first._\n\n- a: oldest\n- b: two lines\n  the second\n\n- c: after a blank line\r\n"
	got := sessionDecisions(six, six.Parse([]byte(cp)), map[string][]byte{"checkpoint-decisions.md": []byte(spill)})
	want := []string{"a: oldest", "b: two lines\n  the second", "c: after a blank line", "d: still here"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sessionDecisions = %q, want %q", got, want)
	}
}
