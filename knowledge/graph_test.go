package knowledge

import (
	"strings"
	"testing"
)

func TestKnowledgeGraphRoundTrip(t *testing.T) {
	kg := &Graph{Header: []byte("# Knowledge Graph\n\n_x_")}
	prov := Provenance{Session: "a", Commit: "0123456789ab", Time: "2026-04-01T22:00Z"}
	ps := kg.Promote([]string{"Use xxhash", "Use blake3 (supersedes: K-0123abcd)\n  because it is faster"}, prov, true)
	if len(ps) != 2 || ps[0].Outcome != "new" || ps[1].State != StatePending {
		t.Fatalf("promotions = %+v", ps)
	}
	src := kg.Render()
	back, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if got := back.Render(); string(got) != string(src) {
		t.Errorf("render(parse(render)) differs:\n%s\n---\n%s", src, got)
	}
	if e, _ := back.Find(ps[1].ID); e == nil || len(e.Supersedes) != 1 || e.Supersedes[0] != "K-0123abcd" || !strings.Contains(e.Text, "because") {
		t.Errorf("entry = %+v", e)
	}
	if _, err := back.Find("K-ffffffff"); err == nil {
		t.Errorf("Find of an unknown id succeeded")
	}
	if _, err := Parse([]byte("## Accepted\n\nstray text\n")); err == nil {
		t.Errorf("text outside an entry was accepted")
	}
}

// TestMerge: merge(x, x, x) == x; entries from both sides are united, provenance lists too,
// and a state changed on one side wins.
func TestMerge(t *testing.T) {
	prov := func(s string) Provenance {
		return Provenance{Session: s, Commit: "0123456789ab", Time: "2026-04-01T22:00Z"}
	}
	base := &Graph{Header: []byte("# Knowledge Graph")}
	base.Promote([]string{"Use xxhash"}, prov("a"), true)
	b := base.Render()
	if got, err := Merge(b, b, b); err != nil || string(got) != string(b) {
		t.Fatalf("merge(x, x, x) = %q, %v", got, err)
	}
	ours, _ := Parse(b)
	ours.Promote([]string{"Use xxhash", "Keep notes short"}, prov("b"), true)
	theirs, _ := Parse(b)
	theirs.Entries[0].State = StateAccepted
	theirs.Promote([]string{"Pin go 1.26"}, prov("c"), true)
	out, err := Merge(b, ours.Render(), theirs.Render())
	if err != nil {
		t.Fatal(err)
	}
	kg, err := Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(kg.Entries) != 3 {
		t.Fatalf("%d entries, want 3:\n%s", len(kg.Entries), out)
	}
	first := kg.Entries[0]
	if first.State != StateAccepted || len(first.Provenance) != 2 {
		t.Errorf("first entry %+v: want accepted (theirs) with both sessions", first)
	}
	if _, err := Merge(b, []byte("## Accepted\n\nstray\n"), b); err == nil || !strings.Contains(err.Error(), "outside an entry") {
		t.Errorf("merge of a broken graph: %v", err)
	}
}

func TestNormText(t *testing.T) {
	for in, want := range map[string]string{
		"- [x] **[decision]**: use  xxhash\n  because": "use xxhash because",
		"> quoted":     "quoted",
		"plain\ttext ": "plain text",
		"- D3: rule":   "D3: rule",
	} {
		if got := NormText(in); got != want {
			t.Errorf("NormText(%q) = %q, want %q", in, got, want)
		}
	}
	if DecisionID("- use xxhash") != DecisionID("use   xxhash") {
		t.Error("the same decision, written twice, has two ids")
	}
	if got := ItemText("- [ ] keep\n  two lines "); got != "keep\n  two lines" {
		t.Errorf("ItemText = %q", got)
	}
}
