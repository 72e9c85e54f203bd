// inventory.hpp: types shared by the C++ fixture's translation units. Some
// methods are defined in the class (implicitly inline) and some out of class in
// inventory.cpp; the templates are instantiated from both main.cpp and
// inventory.cpp, so their code shows up in several compile units.
#ifndef BACKTRAIL_FIXTURE_INVENTORY_HPP
#define BACKTRAIL_FIXTURE_INVENTORY_HPP

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace backtrail {
namespace fixture {

// Money is a value type with operator overloads.
class Money {
public:
	Money() = default;
	explicit Money(long cents) : cents_(cents) {}

	long cents() const { return cents_; }

	Money operator+(const Money &o) const { return Money(cents_ + o.cents_); }
	Money operator*(long n) const { return Money(cents_ * n); }
	Money &operator+=(const Money &o)
	{
		cents_ += o.cents_;
		return *this;
	}
	bool operator<(const Money &o) const { return cents_ < o.cents_; }
	bool operator==(const Money &o) const { return cents_ == o.cents_; }

	std::string str() const; // out of class, inventory.cpp

private:
	long cents_ = 0;
};

// Item is an abstract base with virtual functions.
class Item {
public:
	Item(std::string name, Money price);
	virtual ~Item();

	const std::string &name() const { return name_; }
	Money price() const { return price_; }

	virtual Money cost(int quantity) const;
	virtual const char *category() const = 0;

	static int live_items() { return live_; }

protected:
	std::string name_;
	Money price_;

private:
	static int live_;
};

class Book : public Item {
public:
	Book(std::string name, Money price, int pages) : Item(std::move(name), price), pages_(pages) {}
	~Book() override;

	Money cost(int quantity) const override;
	const char *category() const override { return "book"; }
	int pages() const { return pages_; }

private:
	int pages_;
};

class Gadget : public Item {
public:
	Gadget(std::string name, Money price, bool fragile);

	Money cost(int quantity) const override
	{
		Money base = Item::cost(quantity);
		return fragile_ ? base + Money(250) : base;
	}
	const char *category() const override { return "gadget"; }

private:
	bool fragile_;
};

// OutOfStock is thrown by Inventory::take.
class OutOfStock : public std::runtime_error {
public:
	OutOfStock(const std::string &what, int wanted) : std::runtime_error(what), wanted_(wanted) {}
	int wanted() const { return wanted_; }

private:
	int wanted_;
};

namespace stats {

// Accumulator is a class template instantiated for several types.
template <typename T> class Accumulator {
public:
	void add(const T &v)
	{
		values_.push_back(v);
		total_ = total_ + v;
	}
	T total() const { return total_; }
	std::size_t count() const { return values_.size(); }
	T max() const;

private:
	std::vector<T> values_;
	T total_{};
};

template <typename T> T Accumulator<T>::max() const
{
	if (values_.empty())
		throw std::logic_error("Accumulator::max of nothing");
	T best = values_.front();
	for (const T &v : values_)
		if (best < v)
			best = v;
	return best;
}

// largest is a function template; it sorts a copy with a lambda comparator.
template <typename T, typename Less> std::vector<T> largest(std::vector<T> v, std::size_t n, Less less)
{
	std::sort(v.begin(), v.end(), [&](const T &a, const T &b) { return less(b, a); });
	if (v.size() > n)
		v.resize(n);
	return v;
}

} // namespace stats

// Inventory owns items and counts stock in a std::map.
class Inventory {
public:
	Inventory();
	~Inventory();

	void add(Item *item, int stock);
	Money take(const std::string &name, int quantity);
	Money value() const;
	std::vector<std::string> names_by_price() const;
	static Inventory *make_default(int seed);

private:
	std::vector<Item *> items_;
	std::map<std::string, int> stock_;
};

} // namespace fixture
} // namespace backtrail

extern "C" long backtrail_fixture_checksum(const char *data, long len);

#endif
