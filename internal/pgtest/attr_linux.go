package pgtest

import "syscall"

// dieWithParent makes the postmaster die with the test binary, even when
// that is killed before Stop runs. Pdeathsig fires when the forking OS
// thread exits, not the process, and Go ends threads whose goroutine exits
// locked (the ptrace code does), so the caller forks on a locked thread
// that lives as long as the postmaster.
func dieWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
