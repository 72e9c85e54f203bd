// symbols.cc is compiled by TestCxxPeers -update (demangle_peer_test.go)
// with g++ and clang++-14 at -O0 and -O2, to collect mangled names that
// real compilers emit: templates, lambdas, operators, ABI tags,
// std::__cxx11::basic_string, anonymous namespaces, local statics, and,
// from gcc -O2, clones (.constprop, .isra, .part, .cold).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {
struct Hidden {
  int v;
  int get() const { return v; }
};
__attribute__((noinline)) int hidden_fn(Hidden h) { return h.get() * 3; }
}  // namespace

namespace bt {
inline namespace v1 {

struct Point {
  int x, y;
  Point operator+(const Point &o) const { return {x + o.x, y + o.y}; }
  Point &operator+=(const Point &o) {
    x += o.x;
    y += o.y;
    return *this;
  }
  bool operator<(const Point &o) const { return x < o.x || (x == o.x && y < o.y); }
  bool operator==(const Point &o) const { return x == o.x && y == o.y; }
  int operator[](int i) const { return i ? y : x; }
  int operator()(int k) const { return k * x + y; }
  explicit operator bool() const { return x || y; }
  operator std::string() const { return std::to_string(x) + "," + std::to_string(y); }
  Point *operator->() { return this; }
};

template <typename T, int N>
struct Ring {
  T items[N];
  int n = 0;
  void push(const T &t) { items[n++ % N] = t; }
  template <typename F>
  void each(F f) const {
    for (int i = 0; i < n && i < N; i++) f(items[i]);
  }
};

template <typename... Args>
std::size_t count_args(Args &&...) {
  return sizeof...(Args);
}

template <bool B, char C, long L>
long nontype() {
  return B ? C + L : -L;
}

struct [[gnu::abi_tag("btag")]] Tagged {
  std::string name;
  std::string describe() const { return "tagged:" + name; }
};

std::string make_name(const std::string &a, std::string b) { return a + b; }

class Base {
 public:
  virtual ~Base() = default;
  virtual int run(int) = 0;
};

class Derived final : public Base {
 public:
  explicit Derived(int k) : k_(k) {}
  ~Derived() override {}
  int run(int v) override { return v * k_; }

 private:
  int k_;
};

int apply_fn(const std::function<int(int)> &f, int v) { return f(v); }

__attribute__((noinline)) static int big_switch(int op, int a, int b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return b ? a / b : 0;
    default: return op;
  }
}

__attribute__((noinline)) int calls_constprop(int a) { return big_switch(2, a, 7) + big_switch(2, a, 9); }

struct Big {
  long a, b, c, d, e;
};
__attribute__((noinline)) static long isra_candidate(const Big &big) { return big.c * 3 + 1; }
long calls_isra(Big b) { return isra_candidate(b); }

__attribute__((noinline)) void maybe_fail(int v) {
  if (__builtin_expect(v == 42, 0)) {
    std::fprintf(stderr, "failed %d\n", v);
    throw std::runtime_error("v is 42: " + std::to_string(v));
  }
}

template <typename K, typename V>
V lookup(const std::map<K, V> &m, const K &k, V def) {
  auto it = m.find(k);
  return it == m.end() ? def : it->second;
}

}  // namespace v1
}  // namespace bt

template <typename T>
struct Wrapper {
  T value;
  template <typename U>
  auto combine(U u) const -> decltype(value + u) {
    return value + u;
  }
  static Wrapper make(T t) { return Wrapper{t}; }
};

int counter() {
  static int calls = 0;
  return ++calls;
}

int main(int argc, char **argv) {
  using namespace bt;
  Point p{1, 2}, q{3, 4};
  p += q;
  Point r = p + q;
  std::string s = r;
  Ring<Point, 4> ring;
  ring.push(p);
  ring.push(q);
  int total = 0;
  ring.each([&total](const Point &pt) { total += pt[0] + pt(2); });
  auto nested = [argc](int k) {
    auto inner = [k, argc](long m) { return m * k + argc; };
    return inner(k);
  };
  total += nested(3);
  total += static_cast<int>(count_args(1, 2.0, "three", p));
  total += static_cast<int>(nontype<true, 'x', -5>() + nontype<false, '\n', 1L << 40>());
  Tagged t{"t"};
  s += t.describe() + make_name(s, "x");
  std::unique_ptr<Base> b(new Derived(argc));
  total += b->run(3);
  total += apply_fn([](int v) { return v + 1; }, 4);
  total += apply_fn(std::bind(&Derived::run, static_cast<Derived *>(b.get()), std::placeholders::_1), 5);
  std::vector<Point> pts{p, q, r};
  std::sort(pts.begin(), pts.end());
  std::sort(pts.begin(), pts.end(), [](const Point &a, const Point &b) { return b < a; });
  std::unordered_map<std::string, std::vector<int>> um;
  um["a"].push_back(1);
  std::map<std::string, int> m{{"k", 1}};
  total += lookup<std::string, int>(m, std::string("k"), 0);
  total += hidden_fn(Hidden{argc});
  total += calls_constprop(argc) + static_cast<int>(calls_isra(Big{1, 2, 3, 4, 5}));
  total += static_cast<int>(Wrapper<int>::make(2).combine(3.5));
  total += counter() + counter();
  auto tup = std::make_tuple(1, std::string("x"), 2.5);
  total += std::get<0>(tup);
  try {
    maybe_fail(argc + 41);
  } catch (const std::exception &e) {
    total += static_cast<int>(std::string(e.what()).size());
  }
  if (argv[0] == nullptr) std::abort();
  std::printf("%d %s %zu\n", total, s.c_str(), um.size());
  return total & 1;
}
