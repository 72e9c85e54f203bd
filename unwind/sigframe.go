package unwind

import "bytes"

// Signal trampolines recognized by their code when no CFI describes them
// (the Linux kernel's rt_sigframe layouts, arch/x86/include/asm/sigframe.h
// and arch/arm64/kernel/signal.c, with the ucontext of
// include/uapi/asm-generic/ucontext.h).
var (
	// mov $15, %rax; syscall — glibc's and musl's __restore_rt.
	sigreturnAMD64 = []byte{0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05}
	// mov x8, #139; svc #0 — the vDSO's __kernel_rt_sigreturn.
	sigreturnARM64 = []byte{0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4}
)

// Offsets of the saved registers from the stack pointer at the trampoline.
//
// x86-64: the handler's return popped pretcode, so SP points at the
// ucontext; uc_mcontext (struct sigcontext) starts 40 bytes in with r8–r15,
// rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip.
var amd64SigOffsets = map[int]uint64{ // DWARF register → offset from SP
	8: 40, 9: 48, 10: 56, 11: 64, 12: 72, 13: 80, 14: 88, 15: 96,
	5: 104, 4: 112, 6: 120, 3: 128, 1: 136, 0: 144, 2: 152, 7: 160, 16: 168,
}

// arm64: SP points at the rt_sigframe: a 128-byte siginfo, then the
// ucontext, whose uc_mcontext is at 176 and holds fault_address, x0–x30,
// sp, pc.
const arm64SigRegs = 128 + 176 + 8

// sigreturn recognizes a signal trampoline at cur's PC and returns the
// interrupted registers.
func sigreturn(cur *Regs, w *words) (Regs, bool) {
	arch := cur.Arch
	pc, sp := cur.PC(), cur.SP()
	var pat []byte
	switch arch {
	case AMD64:
		pat = sigreturnAMD64
	case ARM64:
		pat = sigreturnARM64
	default:
		return Regs{}, false
	}
	code := make([]byte, len(pat))
	if n, _ := w.mem.ReadAt(code, pc); n < len(code) || !bytes.Equal(code, pat) {
		return Regs{}, false
	}
	next := NewRegs(arch)
	switch arch {
	case AMD64:
		for reg, off := range amd64SigOffsets {
			v, err := w.read(sp + off)
			if err != nil {
				return Regs{}, false
			}
			next.Set(reg, v)
		}
	case ARM64:
		for i := 0; i <= 32; i++ { // x0–x30, sp, pc
			v, err := w.read(sp + arm64SigRegs + uint64(i)*8)
			if err != nil {
				return Regs{}, false
			}
			next.Set(i, v)
		}
	}
	return next, true
}
