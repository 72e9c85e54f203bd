// main.cpp: drives the C++ fixture. Exceptions are thrown and caught, the
// templates from inventory.hpp are instantiated for other types here, and
// std::sort with lambdas pulls deep libstdc++ inline code into main's CU.
#include "inventory.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>

namespace bf = backtrail::fixture;

namespace {

volatile int seed = 3;

struct Point {
	int x, y;

	Point operator+(const Point &o) const { return {x + o.x, y + o.y}; }
	bool operator<(const Point &o) const { return x * x + y * y < o.x * o.x + o.y * o.y; }
};

// Counter has a user-defined destructor so that unwinding runs cleanup code.
class Counter {
public:
	explicit Counter(int *n) : n_(n) { ++*n_; }
	~Counter() { --*n_; }
	Counter(const Counter &) = delete;
	Counter &operator=(const Counter &) = delete;

private:
	int *n_;
};

[[gnu::noinline]] int risky(int level, int *live)
{
	Counter c(live);
	if (level <= 0)
		throw bf::OutOfStock("risky bottomed out", level);
	return risky(level - 1, live) + 1;
}

template <typename T> T sum_all(const std::vector<T> &v)
{
	return std::accumulate(v.begin(), v.end(), T{});
}

} // namespace

namespace backtrail {
namespace fixture {
namespace report {

// Formatter has a static member function and a nested template method.
class Formatter {
public:
	static std::string line(const std::string &key, const std::string &value)
	{
		return key + ": " + value + "\n";
	}

	template <typename T> static std::string list(const std::vector<T> &v, std::function<std::string(const T &)> show)
	{
		std::string out;
		for (std::size_t i = 0; i < v.size(); i++) {
			if (i)
				out += ", ";
			out += show(v[i]);
		}
		return out;
	}
};

} // namespace report
} // namespace fixture
} // namespace backtrail

int main(int argc, char **argv)
{
	std::unique_ptr<bf::Inventory> inv(bf::Inventory::make_default(seed + argc));
	std::string out;
	using bf::report::Formatter;

	out += Formatter::line("value", inv->value().str());
	out += Formatter::line("by price", Formatter::list<std::string>(inv->names_by_price(), [](const std::string &s) { return s; }));

	const char *orders[] = {"gopl", "probe", "taocp", "taocp", "missing", "cable"};
	bf::Money spent;
	int failures = 0;
	for (const char *name : orders) {
		try {
			spent += inv->take(name, argc + seed % 2);
		} catch (const bf::OutOfStock &e) {
			failures += e.wanted();
		} catch (const std::out_of_range &e) {
			failures += 100;
		}
	}
	out += Formatter::line("spent", spent.str());

	bf::stats::Accumulator<int> ints;
	bf::stats::Accumulator<double> doubles;
	for (int i = 0; i < 10 + seed; i++) {
		ints.add(i * argc);
		doubles.add(i / 4.0);
	}
	out += Formatter::line("max", std::to_string(ints.max()) + " " + std::to_string(doubles.max()));

	std::vector<Point> pts;
	for (int i = 0; i < 16; i++)
		pts.push_back(Point{(i * 7 + seed) % 11, (i * 5 + argc) % 13});
	auto top = bf::stats::largest(pts, 3, [](const Point &a, const Point &b) { return a < b; });
	Point sum = std::accumulate(top.begin(), top.end(), Point{0, 0});

	std::vector<std::string> words = {"delta", "alpha", "charlie", "bravo", std::string(argv[0])};
	auto longest = bf::stats::largest(words, 2, [](const std::string &a, const std::string &b) {
		return a.size() < b.size() || (a.size() == b.size() && a < b);
	});
	std::map<std::string, int> lengths;
	for (const auto &w : words)
		lengths[w.substr(0, 1)] += static_cast<int>(w.size());

	int live = 0;
	try {
		risky(seed, &live);
	} catch (const std::exception &e) {
		out += Formatter::line("caught", e.what());
	}

	bf::stats::Accumulator<bf::Money> money;
	money.add(bf::Money(5));
	try {
		bf::stats::Accumulator<long> empty;
		failures += static_cast<int>(empty.max());
	} catch (const std::logic_error &) {
		failures++;
	}

	long check = backtrail_fixture_checksum(out.data(), static_cast<long>(out.size()));
	std::printf("%s", out.c_str());
	std::printf("cpp fixture: %d %d %zu %d %ld %d %ld %d\n", failures, sum.x + sum.y, longest.size(),
		    sum_all(std::vector<int>{1, 2, seed}), money.max().cents(), static_cast<int>(lengths.size()),
		    check & 0xff, bf::Item::live_items() + live);
	return 0;
}
