package backtrail_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail"
)

// site returns "function:line" of a stack's first frame.
func site(s backtrail.Stack) string {
	fr := s.Frames()
	if len(fr) == 0 {
		return "(empty)"
	}
	return fr[0].Function + ":" + itoa(fr[0].Line)
}

func itoa(i int) string {
	if i < 0 {
		return "-" + itoa(-i)
	}
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// nextLine returns "function:line" of the line after its call: the submit
// site written on the next line.
func nextLine() string {
	pc, _, line, _ := runtime.Caller(1)
	return runtime.FuncForPC(pc).Name() + ":" + itoa(line+1)
}

// pool is a minimal worker pool: work arrives on a channel, as in most
// programs, with nothing of its submitter's context.
type pool struct {
	work chan func()
	wg   sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{work: make(chan func())}
	for range n {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for f := range p.work {
				f()
			}
		}()
	}
	return p
}

func (p *pool) close() { close(p.work); p.wg.Wait() }

// TestTrailThreeHops hands work off three times — Go, then a pool through
// Wrap, then AfterFunc — and checks that the innermost work sees all three
// submit sites, innermost first.
func TestTrailThreeHops(t *testing.T) {
	p := newPool(2)
	defer p.close()
	var sites [3]string
	done := make(chan []backtrail.Stack)

	sites[0] = nextLine()
	backtrail.Go(func() {
		sites[1] = nextLine()
		p.work <- backtrail.Wrap(func() {
			sites[2] = nextLine()
			backtrail.AfterFunc(time.Millisecond, func() {
				done <- backtrail.Trail()
			})
		})
	})
	trail := <-done
	if len(trail) != 3 {
		t.Fatalf("Trail() has %d hops, want 3", len(trail))
	}
	for i, want := range []string{sites[2], sites[1], sites[0]} {
		if have := site(trail[i]); have != want {
			t.Errorf("hop %d: submit site %s, want %s", i, have, want)
		}
	}
	// Each hop holds the submitter's whole stack: the outermost hop was made
	// by this test function, under testing.tRunner.
	if !strings.Contains(trail[2].String(), "testing.tRunner") {
		t.Errorf("outermost hop lacks the test's callers:\n%s", trail[2].String())
	}
}

func TestTrailOutsideWork(t *testing.T) {
	if tr := backtrail.Trail(); tr != nil {
		t.Errorf("Trail() outside handed-off work = %d hops", len(tr))
	}
	// After a wrapped call returns on this goroutine, the trail is gone.
	backtrail.Wrap(func() {})()
	if tr := backtrail.Trail(); tr != nil {
		t.Errorf("Trail() after Wrap'd call returned = %d hops", len(tr))
	}
}

// TestTrailNested runs Wrap'd work inside Wrap'd work on one goroutine: the
// inner trail includes the outer hop, and the outer one comes back after.
func TestTrailNested(t *testing.T) {
	var inner, after int
	outerSite := nextLine()
	outer := backtrail.Wrap(func() {
		backtrail.Wrap(func() { inner = len(backtrail.Trail()) })()
		tr := backtrail.Trail()
		after = len(tr)
		if len(tr) > 0 && site(tr[0]) != outerSite {
			t.Errorf("outer trail restored to %s, want %s", site(tr[0]), outerSite)
		}
	})
	outer()
	if inner != 2 || after != 1 {
		t.Errorf("inner trail %d hops (want 2), outer after %d (want 1)", inner, after)
	}
}

// TestTrailBounded hands off more than MaxTrailHops times in a chain.
func TestTrailBounded(t *testing.T) {
	var hop func(n int)
	done := make(chan []backtrail.Stack)
	hop = func(n int) {
		if n == 0 {
			done <- backtrail.Trail()
			return
		}
		backtrail.Go(func() { hop(n - 1) })
	}
	hop(backtrail.MaxTrailHops + 5)
	tr := <-done
	if len(tr) != backtrail.MaxTrailHops {
		t.Errorf("trail after %d hops has %d stacks, want %d", backtrail.MaxTrailHops+5, len(tr), backtrail.MaxTrailHops)
	}
}

func TestGroup(t *testing.T) {
	g, ctx := backtrail.NewGroup(context.Background())
	g.SetLimit(2)
	errBoom := errors.New("boom")
	var hops [3]int
	for i := range 3 {
		g.Go(func() error {
			hops[i] = len(backtrail.Trail())
			if i == 1 {
				return errBoom
			}
			return nil
		})
	}
	if err := g.Wait(); !errors.Is(err, errBoom) {
		t.Errorf("Wait() = %v, want boom", err)
	}
	if ctx.Err() == nil {
		t.Error("group context not canceled")
	}
	if hops != [3]int{1, 1, 1} {
		t.Errorf("trail lengths in group work = %v, want [1 1 1]", hops)
	}
	var zero backtrail.Group
	var ran bool
	if !zero.TryGo(func() error { ran = true; return nil }) {
		t.Error("TryGo on an unlimited group failed")
	}
	if err := zero.Wait(); err != nil || !ran {
		t.Errorf("zero Group: Wait() = %v, ran %v", err, ran)
	}
	var full backtrail.Group
	full.SetLimit(0)
	if full.TryGo(func() error { return nil }) {
		t.Error("TryGo succeeded on a group limited to 0")
	}
}

// TestTrailLabel checks that handed-off work carries the trail as a pprof
// label that names the submitting function.
func TestTrailLabel(t *testing.T) {
	got := make(chan string)
	backtrail.Go(func() {
		got <- goroutineLabel(t, backtrail.LabelKey)
	})
	label := <-got
	if !strings.Contains(label, "TestTrailLabel@") {
		t.Errorf("label %s=%q does not name the submitter", backtrail.LabelKey, label)
	}
}
