// Package knowledge keeps the store's knowledge repository: knowledge-graph.md (seed 002's
// L1), where each session's Key Decisions (and proposed project rules) are promoted to wait
// for review, and MEMORY.md (seed 000), the project memory a full sync writes and into which
// an accepted entry goes once. It parses and renders the graph byte for byte, promotes
// decisions (one entry per decision across sessions, with their provenance), merges two
// machines' graphs by entry id, and commits reviews and promotions.
package knowledge

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// File is the L1 knowledge graph in the knowledge repository.
const File = "knowledge-graph.md"

// MemoryFile is the project memory in the knowledge repository.
const MemoryFile = "MEMORY.md"

// Knowledge graph entry states, in the order their sections appear.
const (
	StateAccepted = "accepted"
	StatePending  = "pending"
	StateRejected = "rejected"
)

var stateHeadings = []struct{ state, heading string }{
	{StateAccepted, "## Accepted"},
	{StatePending, "## Pending review"},
	{StateRejected, "## Rejected"},
}

// Provenance says where a decision came from.
type Provenance struct {
	Session string `json:"session"`
	Commit  string `json:"commit"`
	Time    string `json:"time"`
}

// Kinds of knowledge graph entry: a Key Decision (six 🔑, eleven §10), or a project rule
// (a §3 `Dn:` line MEMORY.md's rules lack). Accepted, each goes to its MEMORY.md section.
const (
	KindDecision = "decision"
	KindRule     = "rule"
)

// Entry is one decision (or proposed rule) in the knowledge graph.
type Entry struct {
	ID         string       `json:"id"`
	Kind       string       `json:"kind"` // KindDecision or KindRule
	State      string       `json:"state"`
	Text       string       `json:"text"`
	Provenance []Provenance `json:"provenance"`
	Supersedes []string     `json:"supersedes"`
}

// Graph is knowledge-graph.md: a header, then entries grouped by state.
type Graph struct {
	Header  []byte // everything before "## Accepted"
	Entries []*Entry
}

// ErrNoEntry is returned for an entry id that is not in the knowledge graph.
var ErrNoEntry = errors.New("no such knowledge graph entry")

var (
	kgEntryHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^### (K-[0-9a-f]{8,})\s*$`) })
	kgFrom         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^- from: (\S+) @ ([0-9a-f]+) \(([^)]*)\)\s*$`) })
	kgSupersedes   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^- supersedes: (K-[0-9a-f]{8,})\s*$`) })
	kgKind         = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^- kind: (rule|decision)\s*$`) })
	supersedesRef  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`supersedes:?\s+(K-[0-9a-f]{8,})`) })
)

// itemPrefix is what starts a list item as ckpt writes one: a bullet, a checkbox, a bold
// label such as **[decision]**:, a quote marker.
var itemPrefix = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:[-*+] )?(?:\[[ xX]\] )?(?:\*\*[^*]+\*\*[:：]\s*)?(?:> ?)?`)
})

// ItemText is an item's text without the prefix that makes it a list item, as a decision
// is promoted.
func ItemText(item string) string { return strings.TrimSpace(itemPrefix().ReplaceAllString(item, "")) }

// NormText is the whitespace-normalized text of an item, prefix aside: how ckpt recognises
// an entry already present, and the same decision in two sessions.
func NormText(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		if i == 0 {
			l = itemPrefix().ReplaceAllString(l, "")
		}
		b.WriteString(l)
		b.WriteByte(' ')
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// DecisionID is the stable id of a decision: K- and 8 hex digits of the hash of its
// whitespace-normalized text, so the same decision from two sessions is one entry.
func DecisionID(text string) string {
	sum := sha1.Sum([]byte(NormText(text)))
	return "K-" + hex.EncodeToString(sum[:4])
}

// RuleID is the stable id of a proposed rule: K- and 8 hex digits of the hash of its
// RuleKey, so the same rule, reworded or numbered differently, is one entry.
func RuleID(text string) string {
	sum := sha1.Sum([]byte("rule\x00" + RuleKey(text)))
	return "K-" + hex.EncodeToString(sum[:4])
}

func entryID(kind, text string) string {
	if kind == KindRule {
		return RuleID(text)
	}
	return DecisionID(text)
}

// Parse reads knowledge-graph.md. It accepts what RenderKnowledgeGraph writes
// and tolerates hand edits: unknown lines inside an entry become part of its text.
func Parse(src []byte) (*Graph, error) {
	kg := &Graph{}
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	state := ""
	var cur *Entry
	var header []string
	seen := map[string]bool{}
	for i, l := range lines {
		if st := headingState(l); st != "" {
			state, cur = st, nil
			continue
		}
		if state == "" {
			header = append(header, l)
			continue
		}
		if m := kgEntryHeading().FindStringSubmatch(l); m != nil {
			if seen[m[1]] {
				return nil, fmt.Errorf("%s:%d: entry %s appears twice", File, i+1, m[1])
			}
			seen[m[1]] = true
			cur = &Entry{ID: m[1], Kind: KindDecision, State: state}
			kg.Entries = append(kg.Entries, cur)
			continue
		}
		if cur == nil {
			if strings.TrimSpace(l) != "" {
				return nil, fmt.Errorf("%s:%d: text outside an entry (entries start with ### K-…)", File, i+1)
			}
			continue
		}
		if m := kgFrom().FindStringSubmatch(l); m != nil {
			cur.Provenance = append(cur.Provenance, Provenance{Session: m[1], Commit: m[2], Time: m[3]})
			continue
		}
		if m := kgSupersedes().FindStringSubmatch(l); m != nil {
			cur.Supersedes = append(cur.Supersedes, m[1])
			continue
		}
		if m := kgKind().FindStringSubmatch(l); m != nil && len(cur.Provenance) > 0 {
			cur.Kind = m[1]
			continue
		}
		if len(cur.Provenance) == 0 && len(cur.Supersedes) == 0 {
			cur.Text += l + "\n"
		}
	}
	for _, e := range kg.Entries {
		e.Text = strings.Trim(e.Text, "\n")
	}
	kg.Header = []byte(strings.Join(header, "\n"))
	return kg, nil
}

func headingState(l string) string {
	t := strings.TrimRight(l, " \t\r")
	for _, h := range stateHeadings {
		if t == h.heading {
			return h.state
		}
	}
	return ""
}

// Render writes the knowledge graph: the header, then the three state sections with their
// entries in the order they were added.
func (kg *Graph) Render() []byte {
	var b bytes.Buffer
	h := strings.TrimRight(string(kg.Header), "\n")
	if h != "" {
		b.WriteString(h + "\n\n")
	}
	for i, sh := range stateHeadings {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(sh.heading + "\n")
		for _, e := range kg.Entries {
			if e.State != sh.state {
				continue
			}
			b.WriteString("\n### " + e.ID + "\n" + e.Text + "\n")
			for _, p := range e.Provenance {
				fmt.Fprintf(&b, "- from: %s @ %s (%s)\n", p.Session, p.Commit, p.Time)
			}
			for _, s := range e.Supersedes {
				b.WriteString("- supersedes: " + s + "\n")
			}
			if e.Kind == KindRule {
				b.WriteString("- kind: rule\n")
			}
		}
	}
	return b.Bytes()
}

// Find returns the entry with id, or the one entry whose id starts with it.
func (kg *Graph) Find(id string) (*Entry, error) {
	if !strings.HasPrefix(id, "K-") {
		id = "K-" + id
	}
	var match *Entry
	for _, e := range kg.Entries {
		if e.ID == id {
			return e, nil
		}
		if strings.HasPrefix(e.ID, id) {
			if match != nil {
				return nil, fmt.Errorf("%s: ambiguous: matches %s and %s", id, match.ID, e.ID)
			}
			match = e
		}
	}
	if match == nil {
		return nil, fmt.Errorf("%s: %w", id, ErrNoEntry)
	}
	return match, nil
}

// Promotion is one decision (or rule) offered to the knowledge graph.
type Promotion struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	State string `json:"state"`
	// Outcome is "new" (a new entry), "provenance" (a known decision from another session:
	// a provenance line was added), "known" (nothing to add) or "rejected" (rejected once,
	// never promoted again).
	Outcome string `json:"outcome"`
}

// Promote adds decisions to the knowledge graph: new ones under Pending review (or Accepted
// when review is off), known ones (same normalized text) gain this session's provenance
// once, rejected ones are left alone.
func (kg *Graph) Promote(decisions []string, prov Provenance, review bool) []Promotion {
	return kg.promote(KindDecision, decisions, prov, review)
}

// ProposeRules adds project rules (§3 `Dn:` lines MEMORY.md lacks) as Promote adds
// decisions: accepted, they go to MEMORY.md's rules.
func (kg *Graph) ProposeRules(rules []string, prov Provenance, review bool) []Promotion {
	return kg.promote(KindRule, rules, prov, review)
}

func (kg *Graph) promote(kind string, decisions []string, prov Provenance, review bool) []Promotion {
	byID := map[string]*Entry{}
	for _, e := range kg.Entries {
		byID[e.ID] = e
		byID[entryID(e.Kind, e.Text)] = e
	}
	var out []Promotion
	for _, d := range decisions {
		id := entryID(kind, d)
		p := Promotion{ID: id, Kind: kind, Text: d}
		if e, ok := byID[id]; ok {
			p.ID, p.State = e.ID, e.State
			switch {
			case e.State == StateRejected:
				p.Outcome = "rejected"
			case hasSession(e.Provenance, prov.Session):
				p.Outcome = "known"
			default:
				e.Provenance = append(e.Provenance, prov)
				p.Outcome = "provenance"
			}
			out = append(out, p)
			continue
		}
		e := &Entry{ID: id, Kind: kind, State: StatePending, Text: d, Provenance: []Provenance{prov}}
		if !review {
			e.State = StateAccepted
		}
		for _, m := range supersedesRef().FindAllStringSubmatch(d, -1) {
			e.Supersedes = append(e.Supersedes, m[1])
		}
		kg.Entries = append(kg.Entries, e)
		byID[id] = e
		p.State, p.Outcome = e.State, "new"
		out = append(out, p)
	}
	return out
}

func hasSession(ps []Provenance, session string) bool {
	for _, p := range ps {
		if p.Session == session {
			return true
		}
	}
	return false
}

// Diagram draws decisions linked to the sessions they came from and to the decisions they
// supersede, as Mermaid or Graphviz dot. Rejected decisions are left out.
func (kg *Graph) Diagram(format string) (string, error) {
	var b strings.Builder
	sessions := map[string]bool{}
	var entries []*Entry
	for _, e := range kg.Entries {
		if e.State != StateRejected {
			entries = append(entries, e)
			for _, p := range e.Provenance {
				sessions[p.Session] = true
			}
		}
	}
	names := make([]string, 0, len(sessions))
	for s := range sessions {
		names = append(names, s)
	}
	sort.Strings(names)
	label := func(e *Entry) string {
		t := []rune(NormText(e.Text))
		if len(t) > 60 {
			t = append(t[:59], '…')
		}
		return e.ID + ": " + string(t)
	}
	node := func(prefix, id string) string {
		return prefix + strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return '_'
		}, id)
	}
	switch format {
	case "mermaid":
		b.WriteString("graph LR\n")
		for _, s := range names {
			fmt.Fprintf(&b, "  %s([%q])\n", node("s_", s), "session "+s)
		}
		for _, e := range entries {
			style := ""
			if e.State == StatePending {
				style = ":::pending"
			}
			fmt.Fprintf(&b, "  %s[%q]%s\n", node("", e.ID), label(e), style)
		}
		for _, e := range entries {
			for _, p := range e.Provenance {
				fmt.Fprintf(&b, "  %s --> %s\n", node("s_", p.Session), node("", e.ID))
			}
			for _, s := range e.Supersedes {
				fmt.Fprintf(&b, "  %s -. supersedes .-> %s\n", node("", e.ID), node("", s))
			}
		}
		b.WriteString("  classDef pending stroke-dasharray: 5 5\n")
	case "dot":
		b.WriteString("digraph knowledge {\n  rankdir=LR;\n")
		for _, s := range names {
			fmt.Fprintf(&b, "  %s [label=%q, shape=ellipse];\n", node("s_", s), "session "+s)
		}
		for _, e := range entries {
			style := "solid"
			if e.State == StatePending {
				style = "dashed"
			}
			fmt.Fprintf(&b, "  %s [label=%q, shape=box, style=%s];\n", node("", e.ID), label(e), style)
		}
		for _, e := range entries {
			for _, p := range e.Provenance {
				fmt.Fprintf(&b, "  %s -> %s;\n", node("s_", p.Session), node("", e.ID))
			}
			for _, s := range e.Supersedes {
				fmt.Fprintf(&b, "  %s -> %s [label=\"supersedes\", style=dotted];\n", node("", e.ID), node("", s))
			}
		}
		b.WriteString("}\n")
	default:
		return "", fmt.Errorf("graph format %q: want mermaid or dot", format)
	}
	return b.String(), nil
}
