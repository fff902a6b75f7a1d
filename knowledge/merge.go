package knowledge

// Merge merges three versions of knowledge-graph.md by entry id: the union of
// entries, provenance lists united, a state changed on one side taking that side.
func Merge(base, ours, theirs []byte) ([]byte, error) {
	parse := func(b []byte) (*Graph, error) {
		if b == nil {
			return &Graph{}, nil
		}
		return Parse(b)
	}
	b, err := parse(base)
	if err != nil {
		return nil, err
	}
	o, err := parse(ours)
	if err != nil {
		return nil, err
	}
	t, err := parse(theirs)
	if err != nil {
		return nil, err
	}
	baseState := map[string]string{}
	for _, e := range b.Entries {
		baseState[e.ID] = e.State
	}
	byID := map[string]*Entry{}
	for _, e := range o.Entries {
		byID[e.ID] = e
	}
	for _, te := range t.Entries {
		oe, ok := byID[te.ID]
		if !ok {
			o.Entries = append(o.Entries, te)
			byID[te.ID] = te
			continue
		}
		if oe.State == baseState[te.ID] && te.State != oe.State {
			oe.State = te.State
		}
		if te.Kind == KindRule {
			oe.Kind = KindRule
		}
		for _, p := range te.Provenance {
			dup := false
			for _, q := range oe.Provenance {
				dup = dup || (p.Session == q.Session && p.Commit == q.Commit)
			}
			if !dup {
				oe.Provenance = append(oe.Provenance, p)
			}
		}
		for _, sup := range te.Supersedes {
			dup := false
			for _, x := range oe.Supersedes {
				dup = dup || x == sup
			}
			if !dup {
				oe.Supersedes = append(oe.Supersedes, sup)
			}
		}
	}
	if len(o.Header) == 0 {
		o.Header = t.Header
	}
	return o.Render(), nil
}
