package backtrail_test

import (
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/testenv"
)

func cpuTime() time.Duration { return testenv.CPUTime() }

// reportCPU reports the CPU time per op since c0.
func reportCPU(b *testing.B, c0 time.Duration) {
	if c0 == 0 {
		return // not measured on this system
	}
	b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
}
