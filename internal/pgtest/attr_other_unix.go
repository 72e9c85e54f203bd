//go:build unix && !linux

package pgtest

import "syscall"

// dieWithParent does nothing: other systems have no parent-death signal
// that Go can set, so a postmaster outlives a test binary killed before
// Stop runs.
func dieWithParent(*syscall.SysProcAttr) {}
