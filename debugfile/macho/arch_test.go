package macho_test

import (
	"testing"

	"github.com/backtrail/backtrail/debugfile/macho"
)

func TestArchName(t *testing.T) {
	for _, tt := range []struct {
		cpu, sub uint32
		want     string
	}{
		{macho.CPU_TYPE_X86_64, macho.CPU_SUBTYPE_X86_64_ALL, "x86_64"},
		{macho.CPU_TYPE_X86_64, macho.CPU_SUBTYPE_X86_64_ALL | macho.CPU_SUBTYPE_LIB64, "x86_64"}, // executables
		{macho.CPU_TYPE_X86_64, macho.CPU_SUBTYPE_X86_64_H, "x86_64h"},
		{macho.CPU_TYPE_X86_64, 0, "x86_64"}, // unknown subtype: family
		{macho.CPU_TYPE_I386, macho.CPU_SUBTYPE_I386_ALL, "i386"},
		{macho.CPU_TYPE_I386, macho.CPU_SUBTYPE_X86_ARCH1, "i386"},
		{macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64_ALL, "arm64"},
		{macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64_V8, "arm64v8"},
		{macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64E, "arm64e"},
		{macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64E | macho.CPU_SUBTYPE_PTRAUTH_ABI, "arm64e"},
		{macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64E | 0x81000000, "arm64e"}, // ptrauth ABI version 1
		{macho.CPU_TYPE_ARM64, 3, "arm64"},
		{macho.CPU_TYPE_ARM64_32, macho.CPU_SUBTYPE_ARM64_32_V8, "arm64_32"},
		{macho.CPU_TYPE_ARM64_32, macho.CPU_SUBTYPE_ARM64_32_ALL, "arm64_32"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_ALL, "arm"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V6, "armv6"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7, "armv7"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7S, "armv7s"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7K, "armv7k"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7EM, "armv7em"},
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V8M, "armv8m"},  // last known ARM subtype
		{macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V8M + 1, "arm"}, // one past it
		{macho.CPU_TYPE_POWERPC, macho.CPU_SUBTYPE_POWERPC_ALL, "ppc"},
		{macho.CPU_TYPE_POWERPC, macho.CPU_SUBTYPE_POWERPC_970, "ppc970"},
		{macho.CPU_TYPE_POWERPC64, macho.CPU_SUBTYPE_POWERPC_ALL, "ppc64"},
		{macho.CPU_TYPE_POWERPC64, macho.CPU_SUBTYPE_POWERPC_970, "ppc970-64"},
		{0, 0, ""},
		{macho.CPU_TYPE_ANY, 0, ""},
		{macho.CPU_TYPE_ARM64 | 0x02000000, 0, ""},
		{macho.CPU_TYPE_SPARC, 0, ""},
	} {
		if have := macho.ArchName(tt.cpu, tt.sub); have != tt.want {
			t.Errorf("ArchName(%#x, %#x) = %q, want %q", tt.cpu, tt.sub, have, tt.want)
		}
	}
}

func TestParseArch(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cpu, sub uint32
		ok       bool
	}{
		{"x86_64", macho.CPU_TYPE_X86_64, macho.CPU_SUBTYPE_X86_64_ALL, true},
		{"x86_64h", macho.CPU_TYPE_X86_64, macho.CPU_SUBTYPE_X86_64_H, true},
		{"i386", macho.CPU_TYPE_I386, macho.CPU_SUBTYPE_I386_ALL, true},
		{"x86", macho.CPU_TYPE_I386, macho.CPU_SUBTYPE_I386_ALL, true}, // Sentry's name
		{"arm64", macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64_ALL, true},
		{"arm64e", macho.CPU_TYPE_ARM64, macho.CPU_SUBTYPE_ARM64E, true},
		{"arm64_32", macho.CPU_TYPE_ARM64_32, macho.CPU_SUBTYPE_ARM64_32_V8, true},
		{"armv7", macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7, true},
		{"armv7s", macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7S, true},
		{"armv7k", macho.CPU_TYPE_ARM, macho.CPU_SUBTYPE_ARM_V7K, true},
		{"ppc", macho.CPU_TYPE_POWERPC, macho.CPU_SUBTYPE_POWERPC_ALL, true},
		{"ppc64", macho.CPU_TYPE_POWERPC64, macho.CPU_SUBTYPE_POWERPC_ALL, true},
		{"", 0, 0, false},
		{"ARM64", 0, 0, false},
		{"arm64 ", 0, 0, false},
		{"amd64", 0, 0, false},
	} {
		cpu, sub, ok := macho.ParseArch(tt.name)
		if cpu != tt.cpu || sub != tt.sub || ok != tt.ok {
			t.Errorf("ParseArch(%q) = %#x, %#x, %v; want %#x, %#x, %v", tt.name, cpu, sub, ok, tt.cpu, tt.sub, tt.ok)
		}
	}
}

// TestArchRoundTrip checks ArchName(ParseArch(name)) == name for every name
// ArchName returns over all known CPU types and the low subtypes.
func TestArchRoundTrip(t *testing.T) {
	cpus := []uint32{
		macho.CPU_TYPE_I386, macho.CPU_TYPE_X86_64, macho.CPU_TYPE_ARM, macho.CPU_TYPE_ARM64,
		macho.CPU_TYPE_ARM64_32, macho.CPU_TYPE_POWERPC, macho.CPU_TYPE_POWERPC64,
	}
	seen := map[string]bool{}
	for _, cpu := range cpus {
		for sub := uint32(0); sub <= 128; sub++ {
			name := macho.ArchName(cpu, sub)
			if name == "" {
				t.Fatalf("ArchName(%#x, %d) is empty for a known CPU", cpu, sub)
			}
			seen[name] = true
			c, s, ok := macho.ParseArch(name)
			if !ok || c != cpu || macho.ArchName(c, s) != name {
				t.Errorf("ParseArch(ArchName(%#x, %d) = %q) = %#x, %d, %v", cpu, sub, name, c, s, ok)
			}
		}
	}
	for _, name := range []string{"x86_64", "x86_64h", "i386", "arm64", "arm64e", "arm64_32", "armv7", "armv7s", "armv7k", "ppc", "ppc64"} {
		if !seen[name] {
			t.Errorf("ArchName never returned %q", name)
		}
	}
}
