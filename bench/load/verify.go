package main

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"sync"
)

// verification is what the server holds after the load drained, checked
// against what it acknowledged.
type verification struct {
	Acked int64 // distinct event ids acknowledged (plus the priming event)
	// Issues and the sum of their counts: each processed event is counted
	// once in one issue, so Counted == Acked when every acknowledged
	// event was processed exactly once and nothing else was stored;
	// Counted > Acked means events were stored whose acknowledgement never
	// reached the client (in flight at a kill), or were counted twice.
	Issues  int
	Counted int64
	// Checked ids one by one (all or a sample): found processed with an
	// issue, found unprocessed, found failed, not found (lost).
	Checked, OK, Unprocessed, Failed, Lost int
	Sampled                                bool
	Bad                                    []string `json:",omitempty"` // the first few bad ids, with what was wrong
}

// verify checks acknowledged events: the issue counts against the
// acknowledged total, and then n ids (all when n < 0 or n ≥ len(ids)) by
// looking each up, 8 at a time.
func verify(ctx context.Context, cl *cluster, d *driver, ids []uint64, extra int64, n int, seed uint64) (*verification, error) {
	v := &verification{Acked: int64(len(ids)) + extra}
	is, err := cl.issues(ctx)
	if err != nil {
		return nil, err
	}
	v.Issues = len(is)
	for _, i := range is {
		v.Counted += i.Count
	}
	check := ids
	if n >= 0 && n < len(ids) {
		check = append([]uint64(nil), ids...)
		rng := rand.New(rand.NewPCG(seed, 0x7e41))
		rng.Shuffle(len(check), func(i, j int) { check[i], check[j] = check[j], check[i] })
		check = check[:n]
		v.Sampled = true
	}
	v.Checked = len(check)
	var mu sync.Mutex
	var firstErr error
	next := make(chan uint64)
	var wg sync.WaitGroup
	for w := range 8 {
		s := cl.servers[w%len(cl.servers)]
		wg.Go(func() {
			for c := range next {
				id := d.eventID(c)
				e, err := cl.event(ctx, s, id)
				var se *statusError
				mu.Lock()
				switch {
				case errors.As(err, &se) && se.status == http.StatusNotFound:
					v.Lost++
					v.bad(id, "not found")
				case err != nil:
					if firstErr == nil {
						firstErr = err
					}
				case e.Error != "":
					v.Failed++
					v.bad(id, "failed: "+e.Error)
				case !e.Processed || e.Issue == 0:
					v.Unprocessed++
					v.bad(id, "not processed")
				default:
					v.OK++
				}
				mu.Unlock()
			}
		})
	}
	for _, c := range check {
		mu.Lock()
		stop := firstErr != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return v, firstErr
	}
	return v, ctx.Err()
}

func (v *verification) bad(id, what string) {
	if len(v.Bad) < 10 {
		v.Bad = append(v.Bad, id+": "+what)
	}
}
