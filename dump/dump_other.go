//go:build !linux

package dump

import (
	"context"
	"errors"
)

// Dump is supported on Linux only.
func Dump(ctx context.Context, pid int, opts Options) (*Process, error) {
	return nil, errors.ErrUnsupported
}
