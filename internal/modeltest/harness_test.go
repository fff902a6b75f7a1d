package modeltest

import (
	"os/exec"
	"reflect"
	"strings"
	"testing"
)

// The model's predictions are only as good as the harness's picture of a checkpoint:
// these pin it against what ckpt itself says.

// TestHarnessAgreesWithCheck builds the documents the model builds (valid, a token
// inserted, a heading broken, conflict markers, repaired) and asks ckpt check whether
// they pass: the harness's valid must give the same answer.
func TestHarnessAgreesWithCheck(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, tm := range []*tmpl{six, elevenEN} {
		t.Run(tm.name, func(t *testing.T) {
			w, err := newWorld(&sequence{seed: 1, homes: 1, tmpl: tm}, t.TempDir(), &stats{codes: map[string]int{}})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.setup(); err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(w.log, "\n"))
			}
			h := w.homes[0]
			base := w.headFile(h, "checkpoint.md")
			if base == nil {
				t.Fatal("no checkpoint.md in HEAD after init")
			}
			inserted := base
			for i := range tm.headings {
				var ok bool
				if inserted, ok = tm.insert(inserted, i, "- harness edit tok"+tm.ids[i]); !ok {
					t.Fatalf("insert into section %s: heading not found", tm.ids[i])
				}
			}
			conflict := strings.Replace(string(inserted), "- harness edit tok"+tm.ids[1], "<<<<<<< ours\n- one\n=======\n- other\n>>>>>>> origin/m1", 1)
			docs := []struct {
				name string
				doc  []byte
			}{
				{"template", base},
				{"a token in every section", inserted},
				{"first heading broken", tm.breakHeading(inserted, 0)},
				{"last heading broken", tm.breakHeading(inserted, len(tm.headings)-1)},
				{"conflict markers", []byte(conflict)},
				{"repaired heading", tm.repair(tm.breakHeading(inserted, 2))},
				{"repaired conflict", tm.repair([]byte(conflict))},
			}
			for _, d := range docs {
				r, err := w.ckpt(h, nil, d.doc, "check", "--template", tm.name, "/dev/stdin")
				if err != nil {
					t.Fatal(err)
				}
				if want := tm.valid(d.doc); (r.code == 0) != want {
					t.Errorf("%s: harness says valid=%v, ckpt check: %s", d.name, want, r.full())
				}
			}
		})
	}
}

// TestGenerateIsDeterministic: a seed is a replayable name for one sequence.
func TestGenerateIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed < 50; seed++ {
		if a, b := generate(seed, false), generate(seed, false); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d generated two different sequences", seed)
		}
	}
	if reflect.DeepEqual(generate(1, false).ops, generate(2, false).ops) {
		t.Errorf("seeds 1 and 2 generated the same operations")
	}
}
