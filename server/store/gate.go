package store

import "sync"

// writeGate orders SQLite's write transactions (one writer at a time) so
// that ingestion waits for at most one processing transaction: a client
// is waiting for the answer to an accept, nobody is waiting for a batch of
// processing results. Processing still gets every third turn while accepts
// queue up, so a sustained overload grows the backlog instead of stopping
// processing. database/sql hands the one writer connection to its waiters
// in no particular order, hence the gate in front of it.
type writeGate struct {
	mu      sync.Mutex
	cond    sync.Cond
	busy    bool
	urgent  int // accepts waiting
	waiting int // others waiting
	passed  int // urgent turns taken while others waited
}

// urgentTurns is how many accepts may go ahead of a waiting processing
// transaction.
const urgentTurns = 2

func (g *writeGate) lock(urgent bool) {
	g.mu.Lock()
	if g.cond.L == nil {
		g.cond.L = &g.mu
	}
	if urgent {
		g.urgent++
		for g.busy || g.waiting > 0 && g.passed >= urgentTurns {
			g.cond.Wait()
		}
		g.urgent--
		if g.waiting > 0 {
			g.passed++
		}
	} else {
		g.waiting++
		for g.busy || g.urgent > 0 && g.passed < urgentTurns {
			g.cond.Wait()
		}
		g.waiting--
		g.passed = 0
	}
	g.busy = true
	g.mu.Unlock()
}

func (g *writeGate) unlock() {
	g.mu.Lock()
	g.busy = false
	g.cond.Broadcast()
	g.mu.Unlock()
}
