package main

import (
	"strings"
	"testing"
)

// TestColorLines: colouring a diff as it streams past, in writes that cut lines anywhere,
// gives what colouring it line by line whole gives.
func TestColorLines(t *testing.T) {
	p := palette{"<b>", "<r>", "<g>", "<c>", "<y>", "</>"}
	diff := "--- a/📋\n+++ b/📋\n@@ -1,3 +1,3 @@\n ### 📋 Task Stack\n-- [ ] old\n+- [x] new\n context\n-last\n\\ No newline at end of file\n+last\n"
	want := "<b>--- a/📋</>\n<b>+++ b/📋</>\n<c>@@ -1,3 +1,3 @@</>\n ### 📋 Task Stack\n<r>-- [ ] old</>\n<g>+- [x] new</>\n context\n<r>-last</>\n\\ No newline at end of file\n<g>+last</>\n"
	for _, size := range []int{1, 2, 3, 7, 16, len(diff)} {
		var out strings.Builder
		c := &colorLines{w: &out, p: p}
		for rest := diff; rest != ""; {
			n := min(size, len(rest))
			if k, err := c.Write([]byte(rest[:n])); k != n || err != nil {
				t.Fatalf("Write: %d, %v", k, err)
			}
			rest = rest[n:]
		}
		if err := c.flush(); err != nil {
			t.Fatal(err)
		}
		if out.String() != want {
			t.Fatalf("writes of %d bytes:\n%q\nwant\n%q", size, out.String(), want)
		}
	}
	var out strings.Builder
	c := &colorLines{w: &out, p: p}
	c.Write([]byte("+open"))
	c.flush()
	if out.String() != "<g>+open</>" {
		t.Fatalf("a last line without a line ending: %q", out.String())
	}
}
