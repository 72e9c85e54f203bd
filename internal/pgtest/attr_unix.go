//go:build unix

package pgtest

import (
	"os/user"
	"syscall"
)

// procAttr returns how to start a PostgreSQL program: as user u (nil: as
// ourselves, who are not root) and, for the postmaster, so that it dies
// with the test binary where the system can arrange that (dieWithParent).
func procAttr(u *user.User, postmaster bool) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{}
	if u != nil {
		uid, gid := ids(u)
		a.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	if postmaster {
		dieWithParent(a)
	}
	return a
}
