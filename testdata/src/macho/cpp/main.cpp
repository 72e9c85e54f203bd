// main.cpp: the freestanding Mach-O C++ fixture: namespaces, classes with
// virtual functions and destructors, operator overloads, templates with
// several instantiations, lambdas, and static members, without any library.
#include "rt.hpp"

namespace geo {

struct Vec2 {
	long x = 0, y = 0;

	Vec2 operator+(const Vec2 &o) const { return {x + o.x, y + o.y}; }
	Vec2 operator*(long k) const { return {x * k, y * k}; }
	bool operator==(const Vec2 &o) const { return x == o.x && y == o.y; }
	long dot(const Vec2 &o) const;
};

long Vec2::dot(const Vec2 &o) const
{
	return x * o.x + y * o.y;
}

class Shape {
public:
	explicit Shape(Vec2 origin) : origin_(origin) { ++count_; }
	virtual ~Shape() { --count_; }
	virtual long area() const { return 0; }
	virtual const char *name() const { return "shape"; }
	static int count() { return count_; }

protected:
	Vec2 origin_;

private:
	static int count_;
};

int Shape::count_ = 0;

class Rect : public Shape {
public:
	Rect(Vec2 origin, Vec2 size) : Shape(origin), size_(size) {}
	long area() const override { return size_.x * size_.y; }
	const char *name() const override { return "rect"; }

private:
	Vec2 size_;
};

class Square final : public Rect {
public:
	Square(Vec2 origin, long side) : Rect(origin, Vec2{side, side}) {}
	const char *name() const override;
};

const char *Square::name() const
{
	return "square";
}

} // namespace geo

namespace {

volatile long seed = 4;

template <typename T> T sum(const rt::Vec<T> &v)
{
	T total{};
	for (usize i = 0; i < v.size(); i++)
		total = total + v[i];
	return total;
}

[[gnu::noinline]] long fold_areas(rt::Vec<geo::Shape *> &shapes)
{
	long total = 0;
	for (geo::Shape *s : shapes)
		total += s->area();
	return total;
}

long depth(long n)
{
	return n <= 1 ? 1 : 1 + depth(n / 2);
}

} // namespace

extern "C" int main(int argc, char **argv)
{
	(void)argv;
	rt::Vec<long> longs;
	rt::Vec<geo::Vec2> points;
	rt::Vec<geo::Shape *> shapes;

	for (long i = 0; i < 12; i++) {
		longs.push((i * 5 + seed) % 9);
		points.push(geo::Vec2{i, seed - i} * argc);
	}
	rt::insertion_sort(longs.begin(), longs.end(), [](long a, long b) { return a < b; });
	rt::insertion_sort(points.begin(), points.end(),
			   [](const geo::Vec2 &a, const geo::Vec2 &b) { return a.dot(a) < b.dot(b); });

	shapes.push(new geo::Rect(geo::Vec2{0, 0}, geo::Vec2{3, seed}));
	shapes.push(new geo::Square(geo::Vec2{1, 1}, argc + 1));
	shapes.push(new geo::Shape(geo::Vec2{2, 2}));

	long areas = fold_areas(shapes);
	geo::Vec2 psum = sum(points);
	rt::print(shapes[1]->name());
	rt::print(" ");
	rt::print(sum(longs) + areas + psum.x + psum.y + depth(seed * 100));
	rt::print(" ");
	for (geo::Shape *s : shapes)
		delete s;
	rt::print(static_cast<long>(geo::Shape::count() + rt::Arena::used() / 16));
	rt::print("\n");
	exit(0);
}
