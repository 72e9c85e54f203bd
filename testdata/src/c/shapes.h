/*
 * shapes.h: declarations shared by the C fixture's translation units, and
 * static inline helpers that every includer gets its own copy of. Because
 * both main.c and shapes.c include this header, the same source lines show up
 * in two compile units (and, at -O2, inlined into several callers).
 */
#ifndef BACKTRAIL_FIXTURE_SHAPES_H
#define BACKTRAIL_FIXTURE_SHAPES_H

#include <stddef.h>

#define ALWAYS_INLINE __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#define COLD __attribute__((cold, noinline))
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

enum shape_kind {
	SHAPE_SQUARE,
	SHAPE_RECT,
	SHAPE_TRIANGLE,
	SHAPE_CIRCLE,
};

struct shape {
	enum shape_kind kind;
	int a;
	int b;
};

typedef long (*shape_fn)(const struct shape *);

/* Header-defined inline chain: clamp_area -> scale_area -> square_of. */
static inline ALWAYS_INLINE long square_of(long x)
{
	return x * x;
}

static inline long scale_area(long area, int factor)
{
	if (factor <= 0)
		return area;
	return area * factor + square_of(factor);
}

static inline long clamp_area(long area, long max)
{
	long scaled = scale_area(area, 2);
	if (scaled > max)
		return max;
	return scaled;
}

/* shapes.c */
long shape_area(const struct shape *s);
long shape_perimeter(const struct shape *s);
shape_fn shape_measure(int which);
long shapes_total(const struct shape *shapes, size_t n, shape_fn fn);
long checked_area(const struct shape *s);

/* calc.c */
int opcode_eval(int op, int x, int y);
long fib(int n);
unsigned long ackermann(unsigned long m, unsigned long n);
long sum_ints(int count, ...);
long mix_values(const char *fmt, ...);
int parse_digits(const char *s);

#endif
