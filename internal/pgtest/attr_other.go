//go:build !unix

package pgtest

import (
	"os/user"
	"syscall"
)

// procAttr returns nil: off Unix there is no root to switch users from
// (os.Geteuid is -1) and no parent-death signal.
func procAttr(*user.User, bool) *syscall.SysProcAttr { return nil }
