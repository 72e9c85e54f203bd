package store

import (
	"runtime"
	"sync"
	"testing"
)

// waitFor yields until the gate has the given waiters.
func waitFor(g *writeGate, urgent, others int) {
	for {
		g.mu.Lock()
		u, o := g.urgent, g.waiting
		g.mu.Unlock()
		if u == urgent && o == others {
			return
		}
		runtime.Gosched()
	}
}

// TestWriteGateOrder: accepts waiting go ahead of a waiting processing
// transaction, but only urgentTurns of them; then it gets its turn.
func TestWriteGateOrder(t *testing.T) {
	var g writeGate
	g.lock(true) // an accept holds the writer
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	take := func(name string, urgent bool) {
		defer wg.Done()
		g.lock(urgent)
		mu.Lock()
		order = append(order, name)
		mu.Unlock()
		g.unlock()
	}
	wg.Add(1)
	go take("process", false)
	waitFor(&g, 0, 1)
	for i, name := range []string{"accept1", "accept2", "accept3"} {
		wg.Add(1)
		go take(name, true)
		waitFor(&g, i+1, 1)
	}
	g.unlock()
	wg.Wait()
	// The accepts are woken together and race for their two turns; the
	// processing transaction must come third.
	if len(order) != 4 || order[2] != "process" {
		t.Fatalf("order %v, want two accepts, then process, then the third accept", order)
	}
}
