package symbolize_test

import (
	"testing"

	"github.com/backtrail/backtrail/symbolize"
)

func TestCallerAddress(t *testing.T) {
	tests := []struct {
		arch string
		in   uint64
		want uint64
	}{
		{"x86_64", 0x1000, 0xfff},
		{"x86", 0x1001, 0x1000},
		{"amd64", 0x1001, 0x1000},
		{"arm64", 0x1000, 0xffc},
		{"arm64", 0x1003, 0xffc}, // misaligned (PAC bits stripped badly): align first
		{"arm64e", 0x1004, 0x1000},
		{"aarch64", 0x1008, 0x1004},
		{"arm64", 0x2, 0x0},
		{"armv7", 0x1001, 0xffe}, // Thumb
		{"armv7", 0x1004, 0x1000},
		{"riscv64", 0x1000, 0xfff},
		{"ppc64", 0x1000, 0xffc},
		{"unknown", 0x1000, 0x1000},
		{"x86_64", 0, 0},
	}
	for _, tt := range tests {
		if got := symbolize.CallerAddress(tt.in, tt.arch); got != tt.want {
			t.Errorf("CallerAddress(%#x, %q) = %#x, want %#x", tt.in, tt.arch, got, tt.want)
		}
	}
}

func TestFileAddress(t *testing.T) {
	tests := []struct {
		addr, load, vmaddr, want uint64
		ok                       bool
	}{
		{0x1_0000_5000, 0x1_0000_0000, 0x1_0000_0000, 0x1_0000_5000, true}, // Mach-O, no slide
		{0x1_0400_5000, 0x1_0400_0000, 0x1_0000_0000, 0x1_0000_5000, true}, // Mach-O, slid
		{0x7f00_0000_1234, 0x7f00_0000_0000, 0, 0x1234, true},              // ELF PIE
		{0x40_1234, 0x40_0000, 0x40_0000, 0x40_1234, true},                 // ELF ET_EXEC
		{0x3f_ffff, 0x40_0000, 0x40_0000, 0, false},                        // below the image
	}
	for _, tt := range tests {
		got, ok := symbolize.FileAddress(tt.addr, tt.load, tt.vmaddr)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FileAddress(%#x, %#x, %#x) = %#x, %v; want %#x, %v", tt.addr, tt.load, tt.vmaddr, got, ok, tt.want, tt.ok)
		}
	}
	if got := symbolize.RelativeAddress(0x5000, 0x1_0000_0000); got != 0x1_0000_5000 {
		t.Errorf("RelativeAddress = %#x", got)
	}
}
