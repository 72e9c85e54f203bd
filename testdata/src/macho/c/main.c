/*
 * main.c: the freestanding Mach-O C fixture's entry point. No libc: output
 * goes through write(2) declared in sys.h and bound to the libSystem stub.
 */
#include "sys.h"

static volatile long seed = 5;

static NOINLINE long apply_all(long x, long y)
{
	long total = 0;
	for (int op = 0; op < 13; op++)
		total += eval_op((int)((op + seed) % 13), x, y);
	return total;
}

static long gcd(long a, long b)
{
	return b == 0 ? a : gcd(b, a % b);
}

static NOINLINE void report(const char *label, unsigned long v)
{
	char buf[21];
	put_str(label);
	put_str(fmt_ulong(buf, v));
	put_str("\n");
}

int main(int argc, char **argv)
{
	long values[8];
	for (int i = 0; i < 8; i++)
		values[i] = (i * 7 + seed) % 11;
	reducer fns[] = {add_reducer, max_reducer};

	long sum = reduce(values, 8, fns[argc & 1], 0);
	long max = reduce(values, 8, fns[(argc + 1) & 1], 0);
	long ops = apply_all(seed * 3, argc + 2);
	unsigned long h = hash_bytes(argv[0], str_len(argv[0]));

	report("sum ", (unsigned long)sum);
	report("max ", (unsigned long)max);
	report("ops ", (unsigned long)ops);
	report("tri ", (unsigned long)tri(seed * 4));
	report("gcd ", (unsigned long)gcd(seed * 84, 36));
	report("hash ", h & 0xffff);
	if (sum < 0)
		abort();
	exit(0);
}
