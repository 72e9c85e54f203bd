// Command tiny is the smallest program with inlined calls, methods, a
// closure and generics; its pclntab seeds FuzzParse
// (testdata/tiny.pclntab.gz, written by go test -run TestSeedTable -update).
package main

type T struct{ n int }

func (t *T) leaf() { t.n++; work(t) }
func (t *T) mid()  { t.leaf() }

//go:noinline
func work(t *T) { println(t.n) }

func G[N int | float64](x N) N { return x + 1 }

func main() {
	t := &T{}
	t.mid()
	f := func() { t.mid() }
	f()
	println(G(1), G(2.5))
}
