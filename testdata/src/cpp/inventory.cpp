// inventory.cpp: out-of-class member definitions, constructors and
// destructors, an anonymous namespace, a static data member, and an
// extern "C" function.
#include "inventory.hpp"

#include <algorithm>
#include <cstdio>

namespace backtrail {
namespace fixture {

namespace {

// Helpers with internal linkage.
std::string pad_cents(long cents)
{
	std::string s = std::to_string(cents % 100);
	if (s.size() < 2)
		s.insert(s.begin(), '0');
	return s;
}

Money discount(Money m, int quantity)
{
	if (quantity >= 10)
		return Money(m.cents() * 9 / 10);
	return m;
}

} // namespace

int Item::live_ = 0;

std::string Money::str() const
{
	std::string out = cents_ < 0 ? "-$" : "$";
	long abs = cents_ < 0 ? -cents_ : cents_;
	out += std::to_string(abs / 100);
	out += '.';
	out += pad_cents(abs);
	return out;
}

Item::Item(std::string name, Money price) : name_(std::move(name)), price_(price)
{
	++live_;
}

Item::~Item()
{
	--live_;
}

Money Item::cost(int quantity) const
{
	return discount(price_ * quantity, quantity);
}

Book::~Book()
{
	pages_ = 0;
}

Money Book::cost(int quantity) const
{
	// Books over 500 pages cost a little more to ship.
	Money base = Item::cost(quantity);
	if (pages_ > 500)
		base += Money(100) * quantity;
	return base;
}

Gadget::Gadget(std::string name, Money price, bool fragile) : Item(std::move(name), price), fragile_(fragile) {}

Inventory::Inventory() = default;

Inventory::~Inventory()
{
	for (Item *item : items_)
		delete item;
}

void Inventory::add(Item *item, int stock)
{
	items_.push_back(item);
	stock_[item->name()] += stock;
}

Money Inventory::take(const std::string &name, int quantity)
{
	auto it = stock_.find(name);
	if (it == stock_.end())
		throw std::out_of_range("no item " + name);
	if (it->second < quantity)
		throw OutOfStock("not enough " + name, quantity);
	it->second -= quantity;
	for (const Item *item : items_)
		if (item->name() == name)
			return item->cost(quantity);
	throw std::logic_error("stock without item " + name);
}

Money Inventory::value() const
{
	stats::Accumulator<Money> acc;
	for (const Item *item : items_) {
		auto it = stock_.find(item->name());
		acc.add(item->price() * (it == stock_.end() ? 0 : it->second));
	}
	return acc.total();
}

std::vector<std::string> Inventory::names_by_price() const
{
	std::vector<const Item *> sorted(items_.begin(), items_.end());
	std::sort(sorted.begin(), sorted.end(),
		  [](const Item *a, const Item *b) { return a->price() < b->price(); });
	std::vector<std::string> names;
	names.reserve(sorted.size());
	for (const Item *item : sorted)
		names.push_back(item->name());
	return names;
}

Inventory *Inventory::make_default(int seed)
{
	auto *inv = new Inventory;
	inv->add(new Book("gopl", Money(3999 + seed), 380), 5);
	inv->add(new Book("taocp", Money(24999), 3168), 1 + seed % 3);
	inv->add(new Gadget("probe", Money(1299), true), 20);
	inv->add(new Gadget("cable", Money(499 + seed), false), 100);
	return inv;
}

} // namespace fixture
} // namespace backtrail

extern "C" long backtrail_fixture_checksum(const char *data, long len)
{
	unsigned long h = 14695981039346656037ul;
	for (long i = 0; i < len; i++) {
		h ^= static_cast<unsigned char>(data[i]);
		h *= 1099511628211ul;
	}
	return static_cast<long>(h >> 1);
}
