// Command gofixture is the Go fixture: methods on value and pointer
// receivers, closures, generics, calls inlined several levels deep, and
// //go:noinline boundaries between them.
package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// Number is the constraint of the generic helpers.
type Number interface {
	~int | ~int64 | ~float64
}

// Sum is generic and small enough to be inlined.
func Sum[T Number](xs []T) T {
	var total T
	for _, x := range xs {
		total += x
	}
	return total
}

// Map is generic over both element types.
func Map[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// Stack is a generic type with methods.
type Stack[T any] struct {
	items []T
}

func (s *Stack[T]) Push(v T) { s.items = append(s.items, v) }

func (s *Stack[T]) Pop() (T, bool) {
	var zero T
	if len(s.items) == 0 {
		return zero, false
	}
	v := s.items[len(s.items)-1]
	s.items = s.items[:len(s.items)-1]
	return v, true
}

// Inline chain: outer -> middle -> inner -> leaf, all inlinable, called from
// the noinline function chain.
func leaf(x int) int   { return x*x + 1 }
func inner(x int) int  { return leaf(x) + leaf(x+1) }
func middle(x int) int { return inner(x) * 2 }
func outer(x int) int  { return middle(x) - 3 }

//go:noinline
func chain(n int) int {
	total := 0
	for i := range n {
		total += outer(i)
	}
	return total
}

//go:noinline
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	n := len(os.Args)

	acct := NewAccount("fixture", int64(100*n))
	for i := range 5 {
		acct.Deposit(int64(i * 10))
	}
	withdrawn, err := acct.Withdraw(int64(1000 * n))
	if err != nil {
		withdrawn, _ = acct.Withdraw(50)
	}

	shapes := []Shape{Rect{W: 2, H: float64(n)}, Circle{R: 1.5}, &Triangle{A: 3, B: 4, C: 5}}
	areas := Map(shapes, func(s Shape) float64 { return s.Area() })
	sort.Slice(shapes, func(i, j int) bool { return shapes[i].Area() < shapes[j].Area() })

	var st Stack[string]
	for _, s := range shapes {
		st.Push(describe(s))
	}
	var names []string
	for {
		s, ok := st.Pop()
		if !ok {
			break
		}
		names = append(names, s)
	}

	counter := makeCounter(n)
	for range 3 {
		counter()
	}

	fmt.Printf("go fixture: %d %d %.2f %s %d %d %d\n",
		acct.Balance(), withdrawn, Sum(areas), strings.Join(names, ","),
		counter(), chain(10+n), fib(15+n))
}

// makeCounter returns a closure over its own variable and the argument.
func makeCounter(step int) func() int {
	count := 0
	return func() int {
		count += step
		return count
	}
}
