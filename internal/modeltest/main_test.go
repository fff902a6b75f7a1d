package modeltest

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The flags of the model test. The short run (no flag) is seeds 1 to 200; -seed replays
// one sequence; -soak runs sequences from -start on until the time is up.
var (
	flagSeed      = flag.Uint64("seed", 0, "replay the one sequence with this seed")
	flagStart     = flag.Uint64("start", 1, "seed of the first sequence of a run")
	flagSequences = flag.Int("sequences", 200, "sequences in the short run")
	flagSoak      = flag.Duration("soak", 0, "long run: sequences from -start on, longer ones, for this long")
	flagLong      = flag.Bool("long", false, "generate the longer sequences of the soak (with -seed: replay a soak failure)")
	flagWorkers   = flag.Int("workers", 2, "sequences run at once")
	flagKeep      = flag.Bool("keep", false, "keep the stores of failing sequences and print where they are")
	flagOps       = flag.Bool("ops", false, "log the operations of every sequence, not only of failing ones")
	flagWithout   = flag.String("without", "", "comma-separated operations or entry styles to leave out (write, sync, link, …; kill, conc), to look past a known failure")
)

// ckptBin is the binary TestMain built, as internal/proctest does: the test drives the
// real program, in processes of its own, so that a kill -9 is a real one.
var ckptBin string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ckpt-modeltest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "modeltest:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ckptBin = filepath.Join(dir, "ckpt")
	build := exec.Command("go", "build", "-o", ckptBin, "github.com/ckpt-dev/ckpt/cmd/ckpt")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintf(os.Stderr, "modeltest: build ckpt: %v\n", err)
		return 1
	}
	return m.Run()
}

// epoch is the model clock's start (CKPT_NOW of the first command of every sequence).
var epoch = time.Date(2026, 4, 1, 22, 0, 0, 0, time.UTC)
