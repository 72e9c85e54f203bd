/*
 * shapes.c: function pointers, a table of static functions, header inline
 * helpers, and a cold error path that gcc -O2 moves into shape_area.cold.
 */
#include <stdio.h>
#include <stdlib.h>

#include "shapes.h"

static long square_area(const struct shape *s)
{
	return square_of(s->a);
}

static long rect_area(const struct shape *s)
{
	return (long)s->a * s->b;
}

static long triangle_area(const struct shape *s)
{
	return (long)s->a * s->b / 2;
}

static long circle_area(const struct shape *s)
{
	/* 355/113 is close enough to pi for integers. */
	return square_of(s->a) * 355 / 113;
}

static const shape_fn area_table[] = {
	[SHAPE_SQUARE] = square_area,
	[SHAPE_RECT] = rect_area,
	[SHAPE_TRIANGLE] = triangle_area,
	[SHAPE_CIRCLE] = circle_area,
};

static COLD void bad_shape(const struct shape *s, const char *what)
{
	fprintf(stderr, "bad shape %d (%s): a=%d b=%d\n", (int)s->kind, what, s->a, s->b);
	abort();
}

long shape_area(const struct shape *s)
{
	if (UNLIKELY((unsigned)s->kind >= sizeof area_table / sizeof area_table[0])) {
		fprintf(stderr, "shape_area: kind %d out of range\n", (int)s->kind);
		abort();
	}
	if (UNLIKELY(s->a < 0 || s->b < 0))
		bad_shape(s, "negative side");
	return area_table[s->kind](s);
}

long shape_perimeter(const struct shape *s)
{
	switch (s->kind) {
	case SHAPE_SQUARE:
		return 4L * s->a;
	case SHAPE_RECT:
		return 2L * (s->a + s->b);
	case SHAPE_TRIANGLE:
		return 3L * s->a;
	case SHAPE_CIRCLE:
		return 2L * s->a * 355 / 113;
	}
	bad_shape(s, "unknown kind");
	return 0;
}

shape_fn shape_measure(int which)
{
	return which ? shape_perimeter : shape_area;
}

long shapes_total(const struct shape *shapes, size_t n, shape_fn fn)
{
	long total = 0;
	for (size_t i = 0; i < n; i++)
		total += clamp_area(fn(&shapes[i]), 1L << 40);
	return total;
}

long checked_area(const struct shape *s)
{
	long area = shape_area(s);
	if (UNLIKELY(area > 1000000)) {
		fprintf(stderr, "checked_area: area %ld is suspiciously large\n", area);
		exit(3);
	}
	return scale_area(area, s->b);
}
