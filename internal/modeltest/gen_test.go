package modeltest

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// kind is one operation of the model.
type kind int

const (
	opNote        kind = iota // the agent appends a notes entry (O_APPEND)
	opEdit                    // the harness rewrites checkpoint.md with a token in one section
	opWrite                   // ckpt write (stdin)
	opWriteNotes              // ckpt write --file notes.md (stdin)
	opCommit                  // ckpt commit
	opSync                    // ckpt sync (full)
	opSparse                  // the transcript grows, then ckpt sync --sparse --transcript F
	opRestoreSect             // ckpt restore --rev R --section X
	opRestore                 // ckpt restore --rev R
	opGC                      // ckpt gc, with or without --squash-sparse-older-than
	opPush                    // ckpt push (two homes only)
	opPull                    // ckpt pull (two homes only)
	opDelete                  // the harness deletes checkpoint.md, if it holds nothing uncommitted
	numKinds
)

var kindNames = [numKinds]string{"note", "edit", "write", "write-notes", "commit", "sync", "sync-sparse", "restore-section", "restore", "gc", "push", "pull", "delete"}

func (k kind) String() string { return kindNames[k] }

// runsCkpt reports whether the operation is a ckpt process (which may be killed, and during
// which the agent may keep appending), rather than a file write by the agent or harness.
func (k kind) runsCkpt() bool { return k != opNote && k != opEdit && k != opDelete }

// weights of the operations, for one home and for two (push and pull need a remote).
var (
	weights1 = [numKinds]int{opNote: 18, opEdit: 10, opWrite: 9, opWriteNotes: 5, opCommit: 7, opSync: 11, opSparse: 10, opRestoreSect: 5, opRestore: 4, opGC: 6, opDelete: 2}
	weights2 = [numKinds]int{opNote: 18, opEdit: 10, opWrite: 9, opWriteNotes: 5, opCommit: 7, opSync: 11, opSparse: 10, opRestoreSect: 5, opRestore: 4, opGC: 6, opPush: 7, opPull: 7, opDelete: 2}
)

// style is the shape of a notes entry. The token of an entry is the part of it that sync
// must carry byte for byte to wherever the entry goes: the text after a tag the router
// understands (the tag itself is consumed by routing), but the whole "[tag] text" of an
// unknown tag and the whole link of an entry that starts with one (issue 8 item 5: routed
// "with their text intact").
type style int

const (
	stDecision style = iota
	stTask
	stDone
	stBlocker
	stNote
	stRuleDurable
	stFactDurable
	stDecisionDurable
	stIntent
	stNext
	stPlain
	stKeyword
	stLiteral
	stChecked   // "- [x] …" (item 5)
	stUnchecked // "- [ ] …" (item 5)
	stLink      // "- [docs](https://…) …" (item 5)
	stUnknown   // "- [zork] …" (item 5)
	stMultiline
	stProse // a line of text outside any bullet
	numStyles
)

var styleNames = [numStyles]string{"decision", "task", "done", "blocker", "note", "rule!", "fact!", "decision!", "intent", "next", "plain", "keyword", "literal", "checked", "unchecked", "link", "unknown-tag", "multiline", "prose"}

func (s style) String() string { return styleNames[s] }

// entry renders a notes entry of style s around token tk (tk2 is a second token, used only
// by the multi-line style) and returns the lines and the strings that must survive.
func entry(s style, tk, tk2 string) (text string, keep []string) {
	switch s {
	case stDecision:
		return "- [decision] we chose " + tk + " over the old way", []string{tk + " over the old way"}
	case stTask:
		return "- [task] (P1) handle " + tk, []string{"handle " + tk}
	case stDone:
		return "- [done] finished " + tk, []string{"finished " + tk}
	case stBlocker:
		return "- [blocker] waiting on " + tk, []string{"waiting on " + tk}
	case stNote:
		return "- [note] " + tk + " noted", []string{tk + " noted"}
	case stRuleDurable:
		return "- [rule!] always keep " + tk, []string{"always keep " + tk}
	case stFactDurable:
		return "- [fact!] " + tk + " is durable", []string{tk + " is durable"}
	case stDecisionDurable:
		return "- [decision!] decided on " + tk, []string{"decided on " + tk}
	case stIntent:
		return "- [intent] work on " + tk, []string{"work on " + tk}
	case stNext:
		return "- [next] then do " + tk, []string{"then do " + tk}
	case stPlain:
		return "- " + tk + " came up", []string{tk + " came up"}
	case stKeyword:
		return "- we decided to keep " + tk, []string{"we decided to keep " + tk}
	case stLiteral:
		return "- run `" + tk + " --check` before release", []string{"`" + tk + " --check`"}
	case stChecked:
		return "- [x] " + tk + " complete", []string{tk + " complete"}
	case stUnchecked:
		return "- [ ] " + tk + " to do", []string{tk + " to do"}
	case stLink:
		l := "[docs](https://example.com/" + tk + ")"
		return "- " + l + " for " + tk, []string{l}
	case stUnknown:
		return "- [zork] " + tk + " unknown", []string{"[zork] " + tk + " unknown"}
	case stMultiline:
		return "- [note] " + tk + " first\n  continued " + tk2, []string{tk + " first", "continued " + tk2}
	case stProse:
		return tk + " loose line", []string{tk + " loose line"}
	}
	panic("unknown style")
}

// op is one generated operation. Everything random about it is drawn when the sequence is
// generated, before anything runs, so the seed alone fixes the sequence; what an operation
// picks at run time (a revision, say) is its parameter taken modulo what exists then.
type op struct {
	kind     kind
	home     int           // which home acts (0 or 1)
	advance  time.Duration // the model clock moves this much before the operation
	style    style         // entry style: notes entries and write --file notes.md
	section  int           // target section, modulo the template's count
	invalid  bool          // edit or write: break a heading (check must reject)
	fromHead bool          // write, write --file notes.md: start from HEAD's bytes, not the disk's
	rev      uint32        // restore: index into the commits of main
	squash   string        // gc: the --squash-sparse-older-than argument, "" for none
	lines    int           // sparse: transcript lines appended first
	partial  bool          // sparse: the last transcript line is left half written
	full     bool          // sync: also pass --transcript

	kill      bool          // SIGKILL the process after killAfter
	killAfter time.Duration //
	conc      int           // entries the agent appends while the process runs
	concGap   time.Duration // between those appends
	concStyle [3]style      //
}

// sequence is what a seed generates: the setting and the operations.
type sequence struct {
	seed          uint64
	homes         int
	tmpl          *tmpl
	fsync         bool
	packThreshold int // 0: the default
	lowBudgets    bool
	ops           []op
}

func (s *sequence) String() string {
	return fmt.Sprintf("template %s, %d home(s), fsync %v, pack threshold %d, low budgets %v, %d operations",
		s.tmpl.name, s.homes, s.fsync, s.packThreshold, s.lowBudgets, len(s.ops))
}

// excluded lists what the short run leaves out (operation or entry style names), each
// with the open issue item whose fix it waits for; the entry becomes a plain one. The soak
// runs everything. Remove an entry as soon as its item is fixed.
var excluded = map[string]string{}

// skipped reads -without: operation names, "kill" and "conc".
func skipped() map[string]bool {
	out := map[string]bool{}
	for _, f := range strings.Split(*flagWithout, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out[f] = true
		}
	}
	return out
}

// generate builds the sequence of a seed. long makes the longer sequences of the soak.
func generate(seed uint64, long bool) *sequence {
	skip := skipped()
	rng := rand.New(rand.NewPCG(seed, 0x6d6f64656c))
	s := &sequence{seed: seed, homes: 1, tmpl: six}
	if rng.IntN(100) < 40 {
		s.homes = 2
	}
	if rng.IntN(100) < 35 {
		s.tmpl = elevenEN
	}
	s.fsync = rng.IntN(100) < 15
	if rng.IntN(100) < 40 {
		s.packThreshold = 10 + rng.IntN(20)
	}
	s.lowBudgets = rng.IntN(100) < 30
	n := 4 + rng.IntN(9)
	if long {
		n = 12 + rng.IntN(40)
	}
	w := weights1
	if s.homes == 2 {
		w = weights2
	}
	for k := range w {
		if skip[kind(k).String()] || (!long && excluded[kind(k).String()] != "") {
			w[k] = 0
		}
	}
	pickStyle := func() style {
		st := style(rng.IntN(int(numStyles)))
		if skip[st.String()] || (!long && excluded[st.String()] != "") {
			st = stPlain
		}
		return st
	}
	total := 0
	for _, x := range w {
		total += x
	}
	// A kill lands anywhere from before main runs to past the end of a typical command:
	// commands take a few ms without fsync and tens of ms with it.
	killWindow := 25 * time.Millisecond
	if s.fsync {
		killWindow = 120 * time.Millisecond
	}
	for range n {
		o := op{}
		pick := rng.IntN(total)
		for k, x := range w {
			if pick < x {
				o.kind = kind(k)
				break
			}
			pick -= x
		}
		o.home = rng.IntN(s.homes)
		o.advance = time.Duration(1+rng.IntN(20)) * time.Minute
		if rng.IntN(100) < 8 {
			o.advance = time.Duration(24+rng.IntN(48)) * time.Hour
		}
		o.style = pickStyle()
		o.section = rng.IntN(64)
		o.invalid = rng.IntN(100) < 12
		o.fromHead = rng.IntN(2) == 0
		o.rev = rng.Uint32()
		switch rng.IntN(4) {
		case 0:
			o.squash = "0d"
		case 1:
			o.squash = "1d"
		case 2:
			o.squash = "12h"
		}
		o.lines = 1 + rng.IntN(4)
		o.partial = rng.IntN(100) < 10
		o.full = rng.IntN(2) == 0
		o.kill = rng.IntN(100) < 15
		o.killAfter = time.Duration(rng.Int64N(int64(killWindow)))
		if rng.IntN(100) < 25 {
			o.conc = 1 + rng.IntN(3)
		}
		o.concGap = time.Duration(rng.Int64N(int64(8 * time.Millisecond)))
		for i := range o.concStyle {
			o.concStyle[i] = pickStyle()
		}
		if !o.kind.runsCkpt() || skip["kill"] {
			o.kill = false
		}
		if !o.kind.runsCkpt() || skip["conc"] {
			o.conc = 0
		}
		s.ops = append(s.ops, o)
	}
	return s
}

// describe is the operation as the failure report lists it, before its outcome.
func (o *op) describe(t *tmpl, homes int) string {
	var b strings.Builder
	if homes > 1 {
		fmt.Fprintf(&b, "home %c: ", 'a'+o.home)
	}
	sec := t.ids[o.section%len(t.ids)]
	switch o.kind {
	case opNote:
		fmt.Fprintf(&b, "agent appends a %s entry", o.style)
	case opEdit:
		fmt.Fprintf(&b, "harness edits %s", sec)
		if o.invalid {
			fmt.Fprintf(&b, " and breaks the heading of %s", t.ids[(o.section/7)%len(t.ids)])
		}
	case opWrite:
		fmt.Fprintf(&b, "ckpt write (from %s, token in %s", baseName(o.fromHead), sec)
		if o.invalid {
			fmt.Fprintf(&b, ", heading of %s broken", t.ids[(o.section/7)%len(t.ids)])
		}
		b.WriteString(")")
	case opWriteNotes:
		fmt.Fprintf(&b, "ckpt write --file notes.md (from %s, + a %s entry)", baseName(o.fromHead), o.style)
	case opSync:
		b.WriteString("ckpt sync")
		if o.full {
			b.WriteString(" --transcript F")
		}
	case opSparse:
		fmt.Fprintf(&b, "transcript +%d line(s)", o.lines)
		if o.partial {
			b.WriteString(" (last one half written)")
		}
		b.WriteString(", ckpt sync --sparse --transcript F")
	case opRestoreSect:
		fmt.Fprintf(&b, "ckpt restore --rev R --section %s", sec)
	case opRestore:
		b.WriteString("ckpt restore --rev R")
	case opDelete:
		b.WriteString("harness deletes checkpoint.md")
	case opGC:
		b.WriteString("ckpt gc")
		if o.squash != "" {
			b.WriteString(" --squash-sparse-older-than " + o.squash)
		}
	default:
		b.WriteString("ckpt " + o.kind.String())
	}
	if o.conc > 0 {
		fmt.Fprintf(&b, " [agent appends %d entries meanwhile]", o.conc)
	}
	if o.kill {
		fmt.Fprintf(&b, " [kill -9 after %s]", o.killAfter.Round(100*time.Microsecond))
	}
	return b.String()
}

func baseName(head bool) string {
	if head {
		return "HEAD"
	}
	return "disk"
}
