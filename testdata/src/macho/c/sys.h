/*
 * sys.h: the freestanding Mach-O C fixture's only header. There is no SDK, so
 * the few libSystem functions used are declared here by hand, together with
 * static inline helpers that both translation units include.
 */
#ifndef BACKTRAIL_MACHO_SYS_H
#define BACKTRAIL_MACHO_SYS_H

typedef unsigned long usize;

long write(int fd, const void *buf, usize n);
void exit(int code) __attribute__((noreturn));
void abort(void) __attribute__((noreturn));

#define ALWAYS_INLINE __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))

static inline ALWAYS_INLINE usize str_len(const char *s)
{
	usize n = 0;
	while (s[n])
		n++;
	return n;
}

static inline void put_str(const char *s)
{
	write(1, s, str_len(s));
}

/* fmt_ulong writes v in decimal into buf (at least 21 bytes) and returns it. */
static inline char *fmt_ulong(char *buf, unsigned long v)
{
	char *p = buf + 20;
	*p = 0;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

/* calc.c */
long eval_op(int op, long x, long y);
long tri(long n);
unsigned long hash_bytes(const void *data, usize n);
typedef long (*reducer)(long acc, long v);
long reduce(const long *v, usize n, reducer fn, long init);
long add_reducer(long acc, long v);
long max_reducer(long acc, long v);

#endif
