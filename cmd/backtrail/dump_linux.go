package main

import (
	"os"
	"os/signal"
	"syscall"
)

// ignoreChildSignals makes the kernel stop sending this process SIGCHLD
// until the returned function restores the runtime's handling. A tracer is
// sent a SIGCHLD at every stop of a traced thread, which the runtime's
// handler then ignores: delivering a thousand of them cost 6–10 % of the
// CPU time of a 1000-thread dump (bench/dump.md). With the signal ignored
// the kernel does not send it, and wait4 reports the stops as before. The
// dump command runs no child processes meanwhile, whose exit status the
// kernel would then discard.
func ignoreChildSignals() (restore func()) {
	signal.Ignore(syscall.SIGCHLD)
	return func() {
		// Reset alone leaves the signal ignored; Notify puts the
		// runtime's handler back, and Stop leaves it there, unwatched,
		// as before.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGCHLD)
		signal.Stop(c)
	}
}
