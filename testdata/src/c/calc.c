/*
 * calc.c: a switch dense enough for a jump table, recursion, variadic
 * functions, and a static inline chain four levels deep in which some levels
 * are always_inline and the others plain inline.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "shapes.h"

/* Inline chain: digit_value (always) <- digit_step (plain) <- digits_fold
 * (always) <- parse_digits_at (plain) <- parse_digits. */
static inline ALWAYS_INLINE int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return -1;
}

static inline int digit_step(int acc, char c)
{
	int d = digit_value(c);
	if (d < 0)
		return acc;
	return acc * 10 + d;
}

static inline ALWAYS_INLINE int digits_fold(const char *s, int limit)
{
	int acc = 0;
	for (int i = 0; i < limit && s[i]; i++)
		acc = digit_step(acc, s[i]);
	return acc;
}

static inline int parse_digits_at(const char *s, int offset)
{
	return digits_fold(s + offset, 9);
}

int parse_digits(const char *s)
{
	if (UNLIKELY(s == NULL)) {
		fputs("parse_digits: NULL\n", stderr);
		abort();
	}
	return parse_digits_at(s, 0);
}

int opcode_eval(int op, int x, int y)
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
	case 12:
		return -x;
	case 13:
		return ~y;
	case 14:
		return x * 31 + y;
	case 15:
		return (x + y) / 2;
	default:
		return 0;
	}
}

long fib(int n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

unsigned long ackermann(unsigned long m, unsigned long n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ackermann(m - 1, 1);
	return ackermann(m - 1, ackermann(m, n - 1));
}

long sum_ints(int count, ...)
{
	va_list ap;
	long total = 0;

	va_start(ap, count);
	for (int i = 0; i < count; i++)
		total += va_arg(ap, int);
	va_end(ap);
	return total;
}

/* mix_values reads arguments as described by fmt: 'i' int, 'l' long,
 * 'd' double, 's' string (its digits are parsed). */
long mix_values(const char *fmt, ...)
{
	va_list ap;
	long total = 0;

	va_start(ap, fmt);
	for (const char *p = fmt; *p; p++) {
		switch (*p) {
		case 'i':
			total += va_arg(ap, int);
			break;
		case 'l':
			total += va_arg(ap, long);
			break;
		case 'd':
			total += (long)va_arg(ap, double);
			break;
		case 's':
			total += parse_digits(va_arg(ap, const char *));
			break;
		default:
			fprintf(stderr, "mix_values: bad format %c\n", *p);
			va_end(ap);
			exit(2);
		}
	}
	va_end(ap);
	return total;
}
