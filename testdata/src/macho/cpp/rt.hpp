// rt.hpp: the freestanding Mach-O C++ fixture's tiny runtime. There is no SDK
// and no C++ library (-nostdlib, -fno-exceptions, -fno-rtti), so this header
// declares the libSystem calls it needs and defines its own containers.
#ifndef BACKTRAIL_MACHO_RT_HPP
#define BACKTRAIL_MACHO_RT_HPP

using usize = decltype(sizeof 0);

extern "C" {
long write(int fd, const void *buf, usize n);
[[noreturn]] void exit(int code);
[[noreturn]] void abort();
}

void *operator new(usize n);
void operator delete(void *p) noexcept;
void operator delete(void *p, usize n) noexcept;
inline void *operator new(usize, void *where) noexcept { return where; }

namespace rt {

// Arena is a bump allocator over a static buffer; operator new uses it.
class Arena {
public:
	static void *alloc(usize n);
	static usize used() { return used_; }

private:
	static unsigned char buf_[1 << 16];
	static usize used_;
};

template <typename T> inline T &&move(T &v) { return static_cast<T &&>(v); }

template <typename T> [[gnu::always_inline]] inline void swap(T &a, T &b)
{
	T tmp = move(a);
	a = move(b);
	b = move(tmp);
}

// Vec is a minimal growable array.
template <typename T> class Vec {
public:
	Vec() = default;
	~Vec() { clear(); }
	Vec(const Vec &) = delete;
	Vec &operator=(const Vec &) = delete;

	void push(const T &v)
	{
		if (len_ == cap_)
			grow();
		new (&data_[len_++]) T(v);
	}
	usize size() const { return len_; }
	T &operator[](usize i) { return data_[check(i)]; }
	const T &operator[](usize i) const { return data_[check(i)]; }
	T *begin() { return data_; }
	T *end() { return data_ + len_; }
	void clear()
	{
		for (usize i = 0; i < len_; i++)
			data_[i].~T();
		len_ = 0;
	}

private:
	usize check(usize i) const
	{
		if (i >= len_)
			abort();
		return i;
	}
	void grow();

	T *data_ = nullptr;
	usize len_ = 0;
	usize cap_ = 0;
};

template <typename T> void Vec<T>::grow()
{
	usize cap = cap_ ? cap_ * 2 : 4;
	T *data = static_cast<T *>(operator new(cap * sizeof(T)));
	for (usize i = 0; i < len_; i++) {
		new (&data[i]) T(move(data_[i]));
		data_[i].~T();
	}
	operator delete(data_);
	data_ = data;
	cap_ = cap;
}

// insertion_sort is a function template taking any comparator, lambdas too.
template <typename It, typename Less> void insertion_sort(It first, It last, Less less)
{
	for (It i = first; i != last; ++i)
		for (It j = i; j != first && less(*j, *(j - 1)); --j)
			swap(*j, *(j - 1));
}

void print(const char *s);
void print(long v);

} // namespace rt

#endif
