/*
 * calc.c: a jump-table switch, recursion, function pointers, and an inline
 * chain (always_inline and plain inline levels) in a second compile unit.
 */
#include "sys.h"

static inline ALWAYS_INLINE unsigned long rotl(unsigned long x, int r)
{
	return (x << r) | (x >> (64 - r));
}

static inline unsigned long mix_byte(unsigned long h, unsigned char b)
{
	return rotl(h ^ b, 5) * 0x100000001b3ul;
}

static inline ALWAYS_INLINE unsigned long mix_word(unsigned long h, const unsigned char *p)
{
	for (int i = 0; i < 4; i++)
		h = mix_byte(h, p[i]);
	return h;
}

unsigned long hash_bytes(const void *data, usize n)
{
	const unsigned char *p = data;
	unsigned long h = 0xcbf29ce484222325ul;
	usize i = 0;
	for (; i + 4 <= n; i += 4)
		h = mix_word(h, p + i);
	for (; i < n; i++)
		h = mix_byte(h, p[i]);
	return h;
}

long eval_op(int op, long x, long y)
{
	switch (op) {
	case 0:
		return x + y;
	case 1:
		return x - y;
	case 2:
		return x * y;
	case 3:
		return y ? x / y : 0;
	case 4:
		return y ? x % y : 0;
	case 5:
		return x & y;
	case 6:
		return x | y;
	case 7:
		return x ^ y;
	case 8:
		return x << (y & 15);
	case 9:
		return x >> (y & 15);
	case 10:
		return x < y ? x : y;
	case 11:
		return x > y ? x : y;
	default:
		return -1;
	}
}

long tri(long n)
{
	if (n <= 0)
		return 0;
	return n + tri(n - 1);
}

long reduce(const long *v, usize n, reducer fn, long init)
{
	long acc = init;
	for (usize i = 0; i < n; i++)
		acc = fn(acc, v[i]);
	return acc;
}

long add_reducer(long acc, long v)
{
	return acc + v;
}

long max_reducer(long acc, long v)
{
	return v > acc ? v : acc;
}
