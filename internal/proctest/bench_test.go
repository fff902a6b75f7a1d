package proctest

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Helpers of the whole-process benchmarks (ratio_bench_test.go, scale_bench_test.go).

// median of a non-empty list of durations.
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// bigPair returns two valid six checkpoints of about n bytes whose every body line differs.
func bigPair(n int) (older, newer []byte) {
	build := func(word string) []byte {
		base := string(checkpoint("Benchmark: a 1 MB checkpoint, " + word))
		head, tail, _ := strings.Cut(base, "### 📋 Task Stack\n")
		var b strings.Builder
		b.WriteString(head + "### 📋 Task Stack\n")
		for k := 0; b.Len() < n-len(tail); k++ {
			fmt.Fprintf(&b, "- [x] %s step %d: keep `checkpoint_manager.py` and https://example.com/%d in step\n", word, k, k)
		}
		b.WriteString(tail)
		return []byte(b.String())
	}
	return build("draft"), build("final")
}
