// rt.cpp: out-of-class definitions for the runtime in rt.hpp.
#include "rt.hpp"

namespace rt {

unsigned char Arena::buf_[1 << 16];
usize Arena::used_ = 0;

void *Arena::alloc(usize n)
{
	n = (n + 15) & ~usize(15);
	if (used_ + n > sizeof buf_)
		abort();
	void *p = buf_ + used_;
	used_ += n;
	return p;
}

namespace {

usize length(const char *s)
{
	usize n = 0;
	while (s[n])
		n++;
	return n;
}

} // namespace

void print(const char *s)
{
	write(1, s, length(s));
}

void print(long v)
{
	char buf[24];
	char *p = buf + sizeof buf - 1;
	bool neg = v < 0;
	unsigned long u = neg ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
	*p = 0;
	do {
		*--p = static_cast<char>('0' + u % 10);
		u /= 10;
	} while (u);
	if (neg)
		*--p = '-';
	print(p);
}

} // namespace rt

void *operator new(usize n)
{
	return rt::Arena::alloc(n);
}

void operator delete(void *) noexcept {}

void operator delete(void *, usize) noexcept {}
