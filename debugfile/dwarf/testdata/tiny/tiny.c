// tiny.c: a freestanding program whose DWARF is small but has what the
// dwarf package reads: two compile units, inlined subroutines nested three
// deep, a function split into hot and cold parts (a range list), and
// declarations in a header.
#include "tiny.h"

volatile int sink;

static inline __attribute__((always_inline)) int leaf(int x) { return x * 3 + sink; }
static inline __attribute__((always_inline)) int mid(int x) { return leaf(x) + leaf(x + 1); }
static inline __attribute__((always_inline)) int top(int x) { return mid(x) * mid(x - 1); }

__attribute__((noinline)) int work(int n)
{
	int acc = 0;
	for (int i = 0; i < n; i++) {
		if (__builtin_expect(i == 1000, 0))
			acc += rare(i);
		acc += top(i);
	}
	return acc;
}

void _start(void)
{
	sink = work(sink + twice(sink));
	for (;;)
		;
}
