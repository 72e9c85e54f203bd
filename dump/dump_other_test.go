//go:build !linux || !(amd64 || arm64)

package dump_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/backtrail/backtrail/dump"
)

// TestUnsupported checks that where dumps are not supported, Dump says so
// and names the platform, without touching the process.
func TestUnsupported(t *testing.T) {
	p, err := dump.Dump(context.Background(), os.Getpid(), dump.Options{})
	if p != nil || !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("Dump = %v, %v; want errors.ErrUnsupported naming %s/%s", p, err, runtime.GOOS, runtime.GOARCH)
	}
}
