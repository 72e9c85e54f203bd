package unwind

import "fmt"

// Arch describes an architecture's registers in DWARF numbering.
type Arch struct {
	Name    string // "x86_64" or "arm64", as debugfile names them
	PtrSize int
	PC      int // the column that holds the PC in Regs
	SP      int
	FP      int // the frame pointer (rbp, x29)
	LR      int // the link register, or -1
	Names   []string
}

// NumRegs bounds the DWARF register numbers Regs holds: the general
// registers, stack pointer and PC of both architectures (0–32). Higher
// numbers (vector registers, AArch64's RA_SIGN_STATE pseudo-register) are
// not tracked. Regs is copied once per frame, so it stays small.
const NumRegs = 33

// AMD64 is x86-64 (System V AMD64 psABI, Figure 3.36). DWARF register 16
// is the return address column and holds the PC.
var AMD64 = &Arch{
	Name: "x86_64", PtrSize: 8, PC: 16, SP: 7, FP: 6, LR: -1,
	Names: []string{"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
		"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"},
}

// ARM64 is AArch64 (AADWARF64 §4.1): x0–x30 are 0–30, sp is 31, and 32
// holds the PC. The return address column is x30 (the link register).
var ARM64 = &Arch{
	Name: "arm64", PtrSize: 8, PC: 32, SP: 31, FP: 29, LR: 30,
	Names: func() []string {
		n := make([]string, 33)
		for i := 0; i <= 30; i++ {
			n[i] = fmt.Sprintf("x%d", i)
		}
		n[31], n[32] = "sp", "pc"
		return n
	}(),
}

// ArchByName returns the Arch named as debugfile names architectures
// ("x86_64", "arm64"), or nil.
func ArchByName(name string) *Arch {
	switch name {
	case "x86_64", "amd64":
		return AMD64
	case "arm64", "aarch64":
		return ARM64
	}
	return nil
}

// RegName returns the name of DWARF register r.
func (a *Arch) RegName(r int) string {
	if r >= 0 && r < len(a.Names) {
		return a.Names[r]
	}
	return fmt.Sprintf("r%d", r)
}

// stripPAC removes an AArch64 pointer authentication code from a return
// address: user space addresses have at most 52 significant bits
// (48 without LVA); the bits above hold the code.
func stripPAC(pc uint64) uint64 { return pc & (1<<48 - 1) }
