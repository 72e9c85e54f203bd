package symbolize

import "strings"

// Address rules for report processing. A crash report gives absolute
// instruction addresses and, per loaded image, the address it was loaded
// at; debug files are indexed by file address (the address the linker
// assigned). The two differ by the image's slide:
//
//	file address = absolute address − load address + image vmaddr
//
// where image vmaddr is the address the image expected to be loaded at:
// the vmaddr of Mach-O's __TEXT segment (0x100000000 for arm64 and x86_64
// executables, 0 for most dylibs), or for ELF the lowest PT_LOAD vaddr (0
// for PIE and shared objects, 0x400000 for classic x86-64 executables).

// FileAddress converts an absolute address in a process where the image
// was loaded at loadAddr into a file address of the image's debug file,
// whose preferred base is imageVMAddr. ok is false when addr lies below the
// image.
func FileAddress(addr, loadAddr, imageVMAddr uint64) (fileAddr uint64, ok bool) {
	if addr < loadAddr {
		return 0, false
	}
	return addr - loadAddr + imageVMAddr, true
}

// RelativeAddress converts a module-relative address (an offset from the
// image's load address, as MetricKit and some crash formats give) into a
// file address.
func RelativeAddress(rel, imageVMAddr uint64) uint64 { return rel + imageVMAddr }

// CallerAddress maps a return address to an address inside the call
// instruction that produced it, so that symbolization names the line of
// the call rather than the line after it. It must not be applied to the
// first frame of a crashed thread, whose address is the faulting
// instruction itself, nor to frames whose address came from a signal
// context. Unknown architectures are returned unchanged.
//
//	x86, x86_64:      addr − 1 (variable-length instructions: any byte of
//	                  the call will do)
//	arm64, arm, ppc, mips: aligned down to the instruction size, then minus
//	                  one instruction (4 bytes; 2 for Thumb when the low
//	                  bit marks Thumb state)
//	riscv:            addr − 1 (calls may be compressed)
func CallerAddress(addr uint64, arch string) uint64 {
	if addr == 0 {
		return 0
	}
	a := strings.ToLower(arch)
	switch {
	case a == "x86" || a == "x86_64" || a == "x86_64h" || a == "i386" || a == "amd64" || a == "386":
		return addr - 1
	case strings.HasPrefix(a, "arm64") || a == "aarch64" || a == "arm64e" || a == "arm64_32":
		addr &^= 3
		if addr < 4 {
			return addr
		}
		return addr - 4
	case strings.HasPrefix(a, "arm"):
		if addr&1 != 0 { // Thumb
			return (addr &^ 1) - 2
		}
		addr &^= 3
		if addr < 4 {
			return addr
		}
		return addr - 4
	case strings.HasPrefix(a, "ppc"), strings.HasPrefix(a, "mips"):
		addr &^= 3
		if addr < 4 {
			return addr
		}
		return addr - 4
	case strings.HasPrefix(a, "riscv"):
		// Calls may be compressed (2 bytes) or not: any byte of the call
		// will do.
		return addr - 1
	}
	return addr
}
