//go:build !unix

package benchhistory

import "time"

// CPUTime is not measured here: the benchmarks report 0 CPU time.
func CPUTime() time.Duration { return 0 }
