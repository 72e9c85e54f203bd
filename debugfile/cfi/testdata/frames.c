// frames.c exercises the call frame information compilers write: frame
// pointers, variable-length arrays (CFA through rbp), shrink-wrapped early
// returns (DW_CFA_remember_state/restore_state), many callee-saved
// registers, and noreturn calls. cfi_test.go compiles it with gcc and
// clang, with .eh_frame and with .debug_frame, and compares every row with
// readelf -wF.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) int vla(int n, const int *p) {
	int a[n];
	for (int i = 0; i < n; i++)
		a[i] = p[i % 3] * i;
	int s = 0;
	for (int i = 0; i < n; i++)
		s += a[i];
	return s;
}

__attribute__((noinline)) long saves(long a, long b, long c, long d, long e, long f) {
	long x = a * b, y = c * d, z = e * f;
	for (int i = 0; i < (int)a; i++) {
		x += y ^ z;
		y += printf("%ld", x);
		z += x;
	}
	return x + y + z;
}

__attribute__((noinline)) int early(const char *s) {
	if (!s)
		return -1;
	char buf[256];
	strncpy(buf, s, sizeof buf - 1);
	buf[255] = 0;
	return (int)strlen(buf) + puts(buf);
}

__attribute__((noinline, noreturn)) void die(const char *msg) {
	fprintf(stderr, "%s\n", msg);
	abort();
}

int main(int argc, char **argv) {
	int x[3] = {argc, 2, 3};
	if (argc > 5)
		die("too many");
	printf("%d %ld %d\n", vla(argc * 10, x), saves(argc, 2, 3, 4, 5, 6), early(argc > 1 ? argv[1] : NULL));
	return 0;
}
