package history

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ckpt-dev/ckpt/checkpoint"
	"github.com/ckpt-dev/ckpt/knowledge"
	"github.com/ckpt-dev/ckpt/repo"
	"github.com/ckpt-dev/ckpt/templates"
)

// Decision states beyond the knowledge graph's pending, accepted and rejected.
const (
	// StateUnpromoted is a Key Decision in a checkpoint that no full sync has promoted to
	// the knowledge graph yet.
	StateUnpromoted = "unpromoted"
)

// DecisionsQuery says which decisions to list.
type DecisionsQuery struct {
	// Session adds that session's Key Decisions (at Rev) and keeps the knowledge graph
	// entries it contributed to; "" lists the whole knowledge graph.
	Session string
	// Rev is the session's revision ("" for HEAD).
	Rev string
	// State keeps pending, accepted, rejected or unpromoted decisions; "" keeps all.
	State string
}

// Decision is one decision with its state and where it came from.
type Decision struct {
	// ID is the knowledge graph id, K- and 8 hex digits of the decision's normalized text
	// (so a Key Decision not promoted yet has the id it will get).
	ID    string `json:"id"`
	Text  string `json:"text"`
	State string `json:"state"`
	// Provenance lists where the decision was written: for a Key Decision, the commit that
	// added it to its section; for a knowledge graph entry, each session commit it was
	// promoted from.
	Provenance []Provenance `json:"provenance"`
	Supersedes []string     `json:"supersedes,omitempty"`
	// Graph is the knowledge repository commit the entry's state was read from (nil for a
	// decision not in the graph).
	Graph *Provenance `json:"graph,omitempty"`
}

// DecisionsResult lists decisions: the session's Key Decisions first (in the section's
// order), then the knowledge graph's other entries (in the graph's order).
type DecisionsResult struct {
	Decisions []Decision `json:"decisions"`
}

var decisionStates = []string{knowledge.StatePending, knowledge.StateAccepted, knowledge.StateRejected, StateUnpromoted}

// Decisions lists Key Decisions and knowledge graph entries with their state and provenance.
func (h *Reader) Decisions(q DecisionsQuery) (DecisionsResult, error) {
	out := DecisionsResult{Decisions: []Decision{}}
	if q.State != "" && !contains(decisionStates, q.State) {
		return out, fmt.Errorf("%w: state %q: want %s", ErrBadQuery, q.State, strings.Join(decisionStates, ", "))
	}
	kg, graph, err := h.knowledgeGraph()
	if err != nil {
		return out, err
	}
	byID := map[string]*knowledge.Entry{}
	for _, e := range kg.Entries {
		byID[e.ID] = e
	}
	listed := map[string]bool{}
	keep := func(d Decision) {
		if q.State == "" || d.State == q.State {
			out.Decisions = append(out.Decisions, d)
		}
	}
	if q.Session != "" {
		err := h.with(q.Session, func(src *source) error {
			ds, err := h.sessionDecisions(src, q.Rev)
			if err != nil {
				return err
			}
			for _, d := range ds {
				if e := byID[d.ID]; e != nil {
					d.State, d.Supersedes, d.Graph = e.State, e.Supersedes, graph
					for _, p := range kgProvenance(e) {
						if p.Session != d.Provenance[0].Session || !strings.HasPrefix(d.Provenance[0].Commit, p.Commit) {
							d.Provenance = append(d.Provenance, p)
						}
					}
				}
				listed[d.ID] = true
				keep(d)
			}
			return nil
		})
		if err != nil {
			return out, err
		}
	}
	for _, e := range kg.Entries {
		if listed[e.ID] {
			continue
		}
		ps := kgProvenance(e)
		if q.Session != "" && !fromSession(ps, q.Session) {
			continue
		}
		keep(Decision{ID: e.ID, Text: e.Text, State: e.State, Provenance: ps, Supersedes: e.Supersedes, Graph: graph})
	}
	return out, nil
}

// knowledgeGraph reads knowledge-graph.md at the knowledge repository's HEAD, under its
// shared lock; before the first promotion the graph is empty and graph is nil.
func (h *Reader) knowledgeGraph() (*knowledge.Graph, *Provenance, error) {
	src, err := openKnowledgeSource(h.svc.Store)
	if errors.Is(err, repo.ErrNotFound) {
		return &knowledge.Graph{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	unlock, err := src.lock()
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	head, err := src.head()
	if err != nil {
		return nil, nil, err
	}
	if head == repo.ZeroHash {
		return &knowledge.Graph{}, nil, nil
	}
	ci, err := src.commit(head)
	if err != nil {
		return nil, nil, err
	}
	b, err := src.readFile(head, knowledge.File)
	if isNotFound(err) {
		return &knowledge.Graph{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	kg, err := knowledge.Parse(b)
	if err != nil {
		return nil, nil, fmt.Errorf("knowledge at %s: %w", repo.ShortHash(head), err)
	}
	p := Provenance{Session: "knowledge", Commit: head.String(), Time: ci.When}
	return kg, &p, nil
}

// sessionDecisions are the entries of the session's Key Decisions section at rev, each with
// the commit that added its first line.
func (h *Reader) sessionDecisions(src *source, rev string) ([]Decision, error) {
	t, err := h.template(src)
	if err != nil {
		return nil, err
	}
	id := t.Section(templates.RoleDecisions)
	if id == "" {
		return nil, nil
	}
	start, err := resolve(src, rev)
	if err != nil {
		return nil, err
	}
	bl, err := blame(src, t, start, string(id))
	if errors.Is(err, ErrNoSection) {
		return nil, nil // a checkpoint without the section has no decisions
	}
	if err != nil {
		return nil, err
	}
	var out []Decision
	var cur []string
	var first BlameLine
	flush := func() {
		if len(cur) == 0 {
			return
		}
		raw := strings.Join(cur, "\n")
		cur = nil
		text := strings.TrimSpace(itemText(raw))
		if text == "" || text == t.Spec.Empty || strings.Trim(text, "()（）") == strings.Trim(t.Spec.Empty, "()（）") {
			return
		}
		out = append(out, Decision{
			ID: knowledge.DecisionID(raw), Text: text, State: StateUnpromoted,
			Provenance: []Provenance{{Session: src.id(), Commit: first.Commit, Time: first.Time, Section: string(id)}},
		})
	}
	prev := -1
	for _, l := range bl.Lines {
		continued := l.Line == prev+1 && (strings.HasPrefix(l.Text, " ") || strings.HasPrefix(l.Text, "\t"))
		if !continued {
			flush()
			first = l
		}
		cur = append(cur, l.Text)
		prev = l.Line
	}
	flush()
	return out, nil
}

// itemText drops a list item's bullet and checkbox.
func itemText(raw string) string {
	s := strings.TrimLeft(raw, " \t")
	for _, p := range []string{"- ", "* ", "+ "} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			s = rest
			break
		}
	}
	for _, p := range []string{"[ ] ", "[x] ", "[X] "} {
		if rest, ok := strings.CutPrefix(s, p); ok {
			s = rest
			break
		}
	}
	return s
}

func kgProvenance(e *knowledge.Entry) []Provenance {
	out := make([]Provenance, 0, len(e.Provenance))
	for _, p := range e.Provenance {
		t, _ := time.Parse(checkpoint.TimeFormat, p.Time)
		if t.IsZero() {
			t, _ = time.Parse(time.RFC3339, p.Time)
		}
		out = append(out, Provenance{Session: p.Session, Commit: p.Commit, Time: t})
	}
	return out
}

func fromSession(ps []Provenance, session string) bool {
	for _, p := range ps {
		if p.Session == session {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
