//go:build !linux || !(amd64 || arm64)

package dump

import (
	"context"
	"errors"
	"fmt"
	"runtime"
)

// Dump needs Linux on amd64 or arm64: ptrace, and register sets the
// unwinder knows. Elsewhere it returns an error wrapping
// errors.ErrUnsupported.
func Dump(ctx context.Context, pid int, opts Options) (*Process, error) {
	return nil, errUnsupported
}

// Threads needs Linux as Dump does.
func Threads(pid int) (int, error) { return 0, errUnsupported }

var errUnsupported = fmt.Errorf("dump: not supported on %s/%s: %w", runtime.GOOS, runtime.GOARCH, errors.ErrUnsupported)
