package sections

import (
	"bufio"
	"bytes"
	"fmt"
	"testing"
)

// rewrittenPair returns two six checkpoints of about n bytes with the same headings whose
// every other line differs: line k of a section says "draft" in the first and "final" in
// the second, and no line repeats within a document. It is the worst case for a line diff:
// nothing in common to anchor on. The content is spread evenly over the first spread
// sections (1 to 6); the others stay empty.
func rewrittenPair(n, spread int) (older, newer []byte) {
	heads := []string{"### 🎯 Current Task", "### 📋 Task Stack", "### ✅ This Session Completed", "### 🔑 Key Decisions", "### 📡 Recovered Delta", "### ⚠️ Notes & Blockers"}
	build := func(word string) []byte {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# Session Checkpoint\n\n_last_updated: 2026-04-01T22:00Z_ <!-- %s -->\n_session_id: bench_\n\n---\n\n", word)
		per := n / spread
		for s, h := range heads {
			b.WriteString(h + "\n")
			start := b.Len()
			for k := 0; s < spread && b.Len()-start < per; k++ {
				fmt.Fprintf(&b, "- [ ] %s item %d.%d: keep `checkpoint_manager.py` and https://example.com/%d in step\n", word, s, k, k)
			}
			b.WriteString("\n")
		}
		return b.Bytes()
	}
	return build("draft"), build("final")
}

// BenchmarkDiff1MBRewritten is the in-process work of `ckpt diff` on a 1 MB checkpoint
// rewritten completely, parsing aside: Diff of the two documents, then Unified for every
// change. Target (for the whole process, issue 2): ≤ 50 ms and ≤ 64 MB peak memory.
// sections=6 spreads the megabyte over the six sections; sections=1 puts it all in one,
// which is the line diff's worst case (its cost grows with the square of a section's
// changed lines).
func BenchmarkDiff1MBRewritten(b *testing.B) {
	for _, spread := range []int{6, 1} {
		b.Run(fmt.Sprintf("sections=%d", spread), func(b *testing.B) {
			older, newer := rewrittenPair(1<<20, spread)
			a, c := Parse(older, Options{}), Parse(newer, Options{})
			if len(a.Sections) != 6 || len(c.Sections) != 6 {
				b.Fatalf("parsed %d and %d sections, want 6", len(a.Sections), len(c.Sections))
			}
			b.SetBytes(int64(len(older) + len(newer)))
			b.ReportAllocs()
			var out int
			for b.Loop() {
				out = 0
				changes := Diff(a, c)
				if len(changes) != 1+spread { // the preamble and the sections with content
					b.Fatalf("%d changes, want %d", len(changes), 1+spread)
				}
				for _, ch := range changes {
					out += len(ch.Unified())
				}
			}
			b.ReportMetric(float64(out), "diff-bytes")
		})
	}
}

// BenchmarkDiff1MBStreamed is what `ckpt diff` does with the same pair: EachChange, each
// change's diff written to a buffered writer, nothing kept.
func BenchmarkDiff1MBStreamed(b *testing.B) {
	for _, spread := range []int{6, 1} {
		b.Run(fmt.Sprintf("sections=%d", spread), func(b *testing.B) {
			older, newer := rewrittenPair(1<<20, spread)
			a, c := Parse(older, Options{}), Parse(newer, Options{})
			b.SetBytes(int64(len(older) + len(newer)))
			b.ReportAllocs()
			var out countWriter
			w := bufio.NewWriter(&out)
			for b.Loop() {
				out = 0
				EachChange(a, c, func(ch Change) bool {
					if err := ch.WriteUnified(w); err != nil {
						b.Fatal(err)
					}
					return true
				})
				w.Flush()
			}
			if out < 2<<20 {
				b.Fatalf("%d bytes of diff, want the two texts whole", out)
			}
			b.ReportMetric(float64(out), "diff-bytes")
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// BenchmarkParse1MBGoldmark parses a 1 MB checkpoint that holds a code fence with `#` lines
// and an HTML block: the fast line scanner hands such a document to goldmark's block
// parser. Target (issue 2): parse of a 1 MB checkpoint ≤ 20 ms.
func BenchmarkParse1MBFenceAndHTML(b *testing.B) {
	benchParseWith(b, "```sh\n# not a heading\n## nor this\n```\n\n<details>\n<summary>raw log</summary>\n## inside an HTML block: not a section\n</details>\n\n", true)
}

// BenchmarkParse1MBGoldmark measures the documents the line scanner leaves to goldmark: an
// HTML block indented inside a list item (only a full parse knows whether the item holds it).
func BenchmarkParse1MBGoldmark(b *testing.B) {
	benchParseWith(b, "- item\n\n  <details>\n  ## inside an HTML block: not a section\n  </details>\n\n", false)
}

func benchParseWith(b *testing.B, extra string, fast bool) {
	src := bigCheckpoint(1 << 20)
	at := bytes.Index(src, []byte("### 🔑 Key Decisions\n"))
	src = append(src[:at:at], append([]byte(extra), src[at:]...)...)
	if _, ok := scanHeadings(src, 0); ok != fast {
		b.Fatalf("the scanner's fast path: %v, want %v", ok, fast)
	}
	doc := Parse(src, Options{})
	if len(doc.Sections) != 6 || !bytes.Contains(doc.Sections[2].Body, []byte("## inside an HTML block")) {
		b.Fatalf("parsed %d sections", len(doc.Sections))
	}
	if !bytes.Equal(doc.Render(), src) {
		b.Fatal("render(parse(x)) != x")
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	for b.Loop() {
		Parse(src, Options{})
	}
}
