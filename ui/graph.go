package ui

import (
	"fmt"
	"html"
	"html/template"
	"sort"
	"strings"

	"github.com/ckpt-dev/ckpt/knowledge"
)

// The knowledge graph drawn as SVG on the server, in layers from left to right: the
// sessions decisions came from, then the decisions, each one column right of the newest
// decision it supersedes. Within a column, nodes sit near the average row of what points
// at them (one barycentre pass), which keeps most edges short and uncrossed.

const (
	sessionW = 150
	entryW   = 260
	nodeH    = 44
	colGap   = 70
	rowGap   = 14
	pad      = 10
)

type gnode struct {
	id      string // K-… or the session id; "" for a bend point
	session bool
	state   string
	label   string // second line of an entry: its text, cut
	layer   int
	row     int
	x, y, w int
	preds   []*gnode // the nodes one layer to the left with an edge to this one
}

// gedge is an edge through its bend points: a long edge gets one in every column it
// crosses, which takes a row there, so it never runs behind a node.
type gedge struct {
	path  []*gnode
	kind  string // from (provenance) or supersedes
	title string
}

// graphSVG draws the entries. An entry superseding one that is not in the graph only
// keeps its text; a supersedes cycle (a hand edit) is cut where it closes.
func graphSVG(entries []*knowledge.Entry) template.HTML {
	if len(entries) == 0 {
		return ""
	}
	byID := map[string]*gnode{}
	sessions := map[string]*gnode{}
	var nodes []*gnode
	for _, e := range entries {
		n := &gnode{id: e.ID, state: e.State, label: cut(oneLine(e.Text), 36), w: entryW}
		byID[e.ID] = n
		nodes = append(nodes, n)
	}
	var edges []*gedge
	for _, e := range entries {
		n := byID[e.ID]
		for _, p := range e.Provenance {
			s := sessions[p.Session]
			if s == nil {
				s = &gnode{id: p.Session, session: true, w: sessionW}
				sessions[p.Session] = s
			}
			edges = append(edges, &gedge{[]*gnode{s, n}, "from", fmt.Sprintf("%s from session %s @ %s", e.ID, p.Session, p.Commit)})
		}
	}
	// Layers: sessions 0; an entry 1 + the layer of the newest entry it supersedes.
	supersedes := map[*gnode][]*gnode{}
	for _, e := range entries {
		for _, s := range e.Supersedes {
			if old := byID[s]; old != nil && old != byID[e.ID] {
				supersedes[byID[e.ID]] = append(supersedes[byID[e.ID]], old)
			}
		}
	}
	state := map[*gnode]int{} // 0 unseen, 1 in progress, 2 done
	var layerOf func(n *gnode) int
	layerOf = func(n *gnode) int {
		switch state[n] {
		case 1:
			return -1 // a cycle: this edge is left out
		case 2:
			return n.layer
		}
		state[n] = 1
		n.layer = 1
		for _, old := range supersedes[n] {
			if l := layerOf(old); l >= 0 {
				n.layer = max(n.layer, l+1)
				edges = append(edges, &gedge{[]*gnode{old, n}, "supersedes", n.id + " supersedes " + old.id})
			}
		}
		state[n] = 2
		return n.layer
	}
	for _, n := range nodes {
		layerOf(n)
	}
	var sess []*gnode
	for _, s := range sessions {
		sess = append(sess, s)
	}
	sort.Slice(sess, func(i, j int) bool { return sess[i].id < sess[j].id })
	layers := [][]*gnode{sess}
	put := func(n *gnode) {
		for len(layers) <= n.layer {
			layers = append(layers, nil)
		}
		layers[n.layer] = append(layers[n.layer], n)
	}
	for _, n := range nodes {
		put(n)
	}
	for _, e := range edges {
		from, to := e.path[0], e.path[1]
		prev := from
		path := []*gnode{from}
		for l := from.layer + 1; l < to.layer; l++ {
			bend := &gnode{layer: l, preds: []*gnode{prev}}
			put(bend)
			path = append(path, bend)
			prev = bend
		}
		to.preds = append(to.preds, prev)
		e.path = append(path, to)
	}
	for i, l := range layers {
		if i > 0 {
			bary := map[*gnode]float64{}
			for _, n := range l {
				sum := 0.0
				for _, p := range n.preds {
					sum += float64(p.row)
				}
				bary[n] = 1e9
				if len(n.preds) > 0 {
					bary[n] = sum / float64(len(n.preds))
				}
			}
			sort.SliceStable(l, func(a, b int) bool { return bary[l[a]] < bary[l[b]] })
		}
		for r, n := range l {
			n.row = r
		}
	}
	// Coordinates.
	x := pad
	height := 0
	for i, l := range layers {
		w := entryW
		if i == 0 {
			w = sessionW
		}
		for _, n := range l {
			n.x, n.y, n.w = x, pad+n.row*(nodeH+rowGap), w
			height = max(height, n.y+nodeH+pad)
		}
		if len(l) > 0 {
			x += w + colGap
		}
	}
	width := x - colGap + pad
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="kg" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="knowledge graph">`, width, height, width, height)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path class="arrowhead" d="M0,0L10,5L0,10z"/></marker></defs>`)
	for _, e := range edges {
		var d strings.Builder
		for i := 0; i+1 < len(e.path); i++ {
			a, c := e.path[i], e.path[i+1]
			x1, y1 := a.x+a.w, a.y+nodeH/2
			x2, y2 := c.x, c.y+nodeH/2
			if i == 0 {
				fmt.Fprintf(&d, "M%d,%d", x1, y1)
			} else {
				fmt.Fprintf(&d, " L%d,%d", x1, y1) // straight through a bend's column
			}
			mid := (x1 + x2) / 2
			fmt.Fprintf(&d, " C%d,%d %d,%d %d,%d", mid, y1, mid, y2, x2, y2)
		}
		fmt.Fprintf(&b, `<path class="edge %s" d="%s" marker-end="url(#arrow)"><title>%s</title></path>`,
			e.kind, d.String(), html.EscapeString(e.title))
	}
	for _, l := range layers {
		for _, n := range l {
			if n.id == "" {
				continue // a bend point
			}
			var href, class, line1, line2, title string
			if n.session {
				href, class, line1, line2, title = sessionURL(n.id), "node session", cut(n.id, 20), "session", "session "+n.id
			} else {
				href, class, line1, line2, title = "#"+n.id, "node entry "+n.state, n.id, n.label, n.id+" ("+n.state+")"
			}
			fmt.Fprintf(&b, `<a href="%s"><g class="%s"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="6"/>`,
				html.EscapeString(href), class, html.EscapeString(title), n.x, n.y, n.w, nodeH)
			fmt.Fprintf(&b, `<text x="%d" y="%d" class="l1">%s</text><text x="%d" y="%d" class="l2">%s</text></g></a>`,
				n.x+8, n.y+18, html.EscapeString(line1), n.x+8, n.y+35, html.EscapeString(line2))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text and attribute above is escaped
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// cut shortens s to n runes with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
