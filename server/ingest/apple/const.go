package apple

import "strconv"

// Names of the numbers MetricKit writes for exceptionType and signal.
//
// Sources: the Mach exception types of xnu osfmk/mach/exception_types.h
// (EXC_BAD_ACCESS = 1 through EXC_CORPSE_NOTIFY = 13) and the signal
// numbers of xnu bsd/sys/signal.h, which Darwin on every architecture
// shares.

var machExceptions = [...]string{
	1:  "EXC_BAD_ACCESS",
	2:  "EXC_BAD_INSTRUCTION",
	3:  "EXC_ARITHMETIC",
	4:  "EXC_EMULATION",
	5:  "EXC_SOFTWARE",
	6:  "EXC_BREAKPOINT",
	7:  "EXC_SYSCALL",
	8:  "EXC_MACH_SYSCALL",
	9:  "EXC_RPC_ALERT",
	10: "EXC_CRASH",
	11: "EXC_RESOURCE",
	12: "EXC_GUARD",
	13: "EXC_CORPSE_NOTIFY",
}

var signals = [...]string{
	1:  "SIGHUP",
	2:  "SIGINT",
	3:  "SIGQUIT",
	4:  "SIGILL",
	5:  "SIGTRAP",
	6:  "SIGABRT",
	7:  "SIGEMT",
	8:  "SIGFPE",
	9:  "SIGKILL",
	10: "SIGBUS",
	11: "SIGSEGV",
	12: "SIGSYS",
	13: "SIGPIPE",
	14: "SIGALRM",
	15: "SIGTERM",
	16: "SIGURG",
	17: "SIGSTOP",
	18: "SIGTSTP",
	19: "SIGCONT",
	20: "SIGCHLD",
	21: "SIGTTIN",
	22: "SIGTTOU",
	23: "SIGIO",
	24: "SIGXCPU",
	25: "SIGXFSZ",
	26: "SIGVTALRM",
	27: "SIGPROF",
	28: "SIGWINCH",
	29: "SIGINFO",
	30: "SIGUSR1",
	31: "SIGUSR2",
}

// machExceptionName names Mach exception type n, or returns "EXC_#n" for a
// number exception_types.h does not define.
func machExceptionName(n uint64) string {
	if n < uint64(len(machExceptions)) && machExceptions[n] != "" {
		return machExceptions[n]
	}
	return "EXC_#" + strconv.FormatUint(n, 10)
}

// signalName names signal n, or returns "SIG#n" for a number signal.h does
// not define.
func signalName(n uint64) string {
	if n < uint64(len(signals)) && signals[n] != "" {
		return signals[n]
	}
	return "SIG#" + strconv.FormatUint(n, 10)
}
