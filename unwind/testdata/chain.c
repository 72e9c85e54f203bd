// chain.c is a call chain for package unwind's synthetic-stack tests:
// _start → top → vla → mid → leaf, each function with a different kind of
// frame (a big leaf frame, callee-saved registers, a frame-pointer CFA for
// a variable-length array). It is freestanding so that it cross-compiles
// for arm64 without a sysroot; unwind_test.go builds it with clang-14 (and
// gcc for x86-64) and links it with ld.lld-14 --eh-frame-hdr.
volatile long sink;

__attribute__((noinline)) long leaf(long n) {
	volatile long big[300];
	big[n & 255] = n;
	sink += big[(n * 7) & 255];
	return sink;
}

__attribute__((noinline)) long mid(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += leaf(i) * i + sink;
	return s + n;
}

__attribute__((noinline)) long vla(long n) {
	volatile char buf[n];
	buf[0] = 1;
	return mid(n) + buf[0];
}

__attribute__((noinline)) long top(long n) { return vla(n) * 3 + 1; }

void _start(void) {
	sink = top(5);
	for (;;)
		;
}
