package progress_test

import (
	"strings"
	"testing"

	"github.com/backtrail/backtrail/internal/progress"
)

func TestDisabledDrawsNothing(t *testing.T) {
	var sb strings.Builder
	b := progress.New(&sb, false, "x", 10)
	b.Set(5)
	b.Finish()
	if sb.Len() != 0 {
		t.Fatalf("disabled bar wrote %q", sb.String())
	}
}

func TestDraws(t *testing.T) {
	var sb strings.Builder
	b := progress.New(&sb, true, "units", 4)
	b.Set(4)
	b.Finish()
	out := sb.String()
	if !strings.Contains(out, "units [") || !strings.Contains(out, "100%") || !strings.Contains(out, "4/4") || !strings.HasSuffix(out, "\n") {
		t.Fatalf("bar output %q", out)
	}
}
