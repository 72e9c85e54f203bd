// Package unwind walks the call stack of a thread from its registers and
// memory: by the DWARF call frame information of the module that holds each
// program counter (package debugfile/cfi: .eh_frame and .debug_frame),
// through signal frames (CIE augmentation "S", or the rt_sigreturn
// trampoline recognized by its instructions, whose ucontext holds the
// interrupted registers), and by the frame-pointer chain (rbp on x86-64,
// x29 on arm64) where no CFI covers a PC. It stops cleanly at the outermost
// frame (return address column undefined, PC zero), on garbage (a stack
// pointer that goes down, an unreadable address, a frame pointer outside
// the stack) and at a frame cap, saying which.
//
// The package knows nothing of processes. It reads memory through the
// Memory interface and takes registers as Regs, numbered as DWARF numbers
// them for each Arch (x86-64: System V psABI §3.6.2; AArch64: AADWARF64
// §4.1). Package dump supplies both from ptrace and /proc; tests supply
// recorded registers and stack snapshots.
//
// Modules (the CFI of one ELF file) are built once and shared: a Module is
// safe for concurrent use and caches the rows it computes per address, so
// unwinding a thousand threads parked in the same functions evaluates each
// row once.
//
// # Untrusted input
//
// Registers, memory and debug files all come from the target. Every read
// is bounded by the caller's Memory; the DWARF expression evaluator runs at
// most MaxExprSteps operations on a stack of at most MaxExprStack values;
// a walk produces at most Options.MaxFrames frames. Garbage ends the walk
// with a reason, never a panic. FuzzEval and FuzzUnwind check this.
package unwind
