// Package golden compares test output with golden files and rewrites them when the tests
// run with -update. Only tests import it; importing it registers the -update flag.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/ckpt-dev/ckpt/sections"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Check compares got with the file at path (relative to the test's package), or writes got
// there under -update. A difference fails the test with a unified diff.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n%s", path, sections.UnifiedDiff("want", "got", want, got))
	}
}
