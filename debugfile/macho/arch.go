package macho

// arches lists the architecture names Apple's tools (lipo, dwarfdump,
// crash reports) and Sentry use, with their CPU type and subtype. The first
// entry for a CPU type, with subtype *_ALL, names the family: ArchName falls
// back to it for subtypes this table does not know.
var arches = []struct {
	name   string
	cpu    uint32
	subcpu uint32
}{
	{"i386", CPU_TYPE_I386, CPU_SUBTYPE_I386_ALL},

	{"x86_64", CPU_TYPE_X86_64, CPU_SUBTYPE_X86_64_ALL},
	{"x86_64h", CPU_TYPE_X86_64, CPU_SUBTYPE_X86_64_H},

	{"arm", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_ALL},
	{"armv4t", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V4T},
	{"armv6", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V6},
	{"armv5", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V5TEJ},
	{"xscale", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_XSCALE},
	{"armv7", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V7},
	{"armv7f", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V7F},
	{"armv7s", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V7S},
	{"armv7k", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V7K},
	{"armv8", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V8},
	{"armv6m", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V6M},
	{"armv7m", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V7M},
	{"armv7em", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V7EM},
	{"armv8m", CPU_TYPE_ARM, CPU_SUBTYPE_ARM_V8M},

	{"arm64", CPU_TYPE_ARM64, CPU_SUBTYPE_ARM64_ALL},
	{"arm64v8", CPU_TYPE_ARM64, CPU_SUBTYPE_ARM64_V8},
	{"arm64e", CPU_TYPE_ARM64, CPU_SUBTYPE_ARM64E},

	// CPU_SUBTYPE_ARM64_32_V8 is what compilers emit, so it takes the
	// family name.
	{"arm64_32", CPU_TYPE_ARM64_32, CPU_SUBTYPE_ARM64_32_V8},

	{"ppc", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_ALL},
	{"ppc601", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_601},
	{"ppc603", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_603},
	{"ppc603e", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_603e},
	{"ppc603ev", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_603ev},
	{"ppc604", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_604},
	{"ppc604e", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_604e},
	{"ppc750", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_750},
	{"ppc7400", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_7400},
	{"ppc7450", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_7450},
	{"ppc970", CPU_TYPE_POWERPC, CPU_SUBTYPE_POWERPC_970},

	{"ppc64", CPU_TYPE_POWERPC64, CPU_SUBTYPE_POWERPC_ALL},
	{"ppc970-64", CPU_TYPE_POWERPC64, CPU_SUBTYPE_POWERPC_970},
}

// ArchName returns the name Apple and Sentry use for a CPU type and
// subtype: "x86_64", "x86_64h", "i386", "arm64", "arm64e", "arm64_32",
// "armv7", "armv7s", "armv7k", "ppc", "ppc64" and so on. Capability bits
// (CPU_SUBTYPE_MASK) are ignored, so arm64e with a pointer authentication
// ABI version is still "arm64e". A subtype this package does not know gets
// the family name ("arm64", "arm"), and an unknown CPU type gets "".
func ArchName(cpu, subcpu uint32) string {
	subcpu &^= CPU_SUBTYPE_MASK
	family := ""
	for _, a := range arches {
		if a.cpu != cpu {
			continue
		}
		if a.subcpu == subcpu {
			return a.name
		}
		if family == "" {
			family = a.name
		}
	}
	return family
}

// ParseArch returns the CPU type and subtype for an architecture name that
// ArchName returns. It also accepts "x86", Sentry's name for i386.
// ArchName(ParseArch(name)) == name for every name ArchName returns.
func ParseArch(name string) (cpu, subcpu uint32, ok bool) {
	if name == "x86" {
		name = "i386"
	}
	for _, a := range arches {
		if a.name == name {
			return a.cpu, a.subcpu, true
		}
	}
	return 0, 0, false
}
