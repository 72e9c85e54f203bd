/*
 * main.c: calls everything in the C fixture. Inputs come from argc and
 * volatile variables so that -O2 cannot fold the program away.
 */
#include <stdio.h>
#include <string.h>

#include "shapes.h"

static volatile int seed = 7;

/* A private copy of the header helpers is inlined here too. */
static NOINLINE long local_clamp(long v)
{
	return clamp_area(v, 5000);
}

static NOINLINE int apply(int (*op)(int, int, int), int code, int x, int y)
{
	return op(code, x, y);
}

static int countdown(int n)
{
	if (n <= 0)
		return 0;
	return 1 + countdown(n - 1);
}

int main(int argc, char **argv)
{
	struct shape shapes[] = {
		{SHAPE_SQUARE, 3 + argc, 0},
		{SHAPE_RECT, seed, argc + 1},
		{SHAPE_TRIANGLE, 4, seed},
		{SHAPE_CIRCLE, argc + 2, 0},
	};
	size_t n = sizeof shapes / sizeof shapes[0];
	long total = 0;

	for (int which = 0; which < 2; which++)
		total += shapes_total(shapes, n, shape_measure(which + argc - 1));
	total += checked_area(&shapes[1]);
	total += local_clamp(total);

	for (int op = 0; op < 17; op++)
		total += apply(opcode_eval, (op + seed) % 17, seed * 3, argc + op);

	total += fib(seed + 10);
	total += (long)ackermann(2, (unsigned long)seed);
	total += countdown(seed * 10);
	total += sum_ints(4, argc, seed, 3, 4);
	total += mix_values("ilds", argc, (long)seed, 2.5, argc > 1 ? argv[1] : "42");
	total += (long)strlen(argv[0]) & 1;

	printf("c fixture: %ld\n", total);
	return total == 0;
}
