package backtrail

import (
	"context"
	"runtime/pprof"
	"sync"
	"time"
)

// Hand-offs. Each entry point captures its caller's stack and trail with one
// frame-pointer walk (captureSubmit), interns the pair as a trail node, and
// runs the work under run, which puts the node where Trail and the next
// hand-off will find it. The entry points are noinline so the stack they
// capture starts at their caller.

// Go runs fn in a new goroutine that carries the caller's stack and trail.
// A panic in fn is recorded with both before it continues (see
// Options.RecoverPanics).
//
//go:noinline
func Go(fn func()) { CurrentClient().spawn(fn) }

// AfterFunc is time.AfterFunc for work that carries the caller's stack and
// trail.
//
//go:noinline
func AfterFunc(d time.Duration, fn func()) *time.Timer { return CurrentClient().after(d, fn) }

// Wrap captures the caller's stack and trail now and returns a function
// that runs fn under them, on whichever goroutine calls it and as often as
// it is called: hand it to a worker pool, a channel, a callback registry.
// Wrap costs one stack capture; calling the result costs two label swaps.
//
//go:noinline
func Wrap(fn func()) func() { return CurrentClient().wrap(fn) }

// Go is the package-level Go for this client.
//
//go:noinline
func (c *Client) Go(fn func()) { c.spawn(fn) }

// AfterFunc is the package-level AfterFunc for this client.
//
//go:noinline
func (c *Client) AfterFunc(d time.Duration, fn func()) *time.Timer { return c.after(d, fn) }

// Wrap is the package-level Wrap for this client.
//
//go:noinline
func (c *Client) Wrap(fn func()) func() { return c.wrap(fn) }

//go:noinline
func (c *Client) spawn(fn func()) {
	n := c.handoff()
	go c.run(n, fn, false)
}

//go:noinline
func (c *Client) after(d time.Duration, fn func()) *time.Timer {
	n := c.handoff()
	return time.AfterFunc(d, func() { c.run(n, fn, false) })
}

//go:noinline
func (c *Client) wrap(fn func()) func() {
	n := c.handoff()
	return func() { c.run(n, fn, true) }
}

// handoff captures the stack of the code that called the public entry point
// (two frames up) and the trail it runs under.
//
//go:noinline
func (c *Client) handoff() *trailNode {
	var s Stack
	parent := captureSubmit(2, &s)
	return newHop(&s, parent)
}

// run runs fn under trail n. For a Wrap the goroutine has a life before and
// after fn, so its labels are set back to the enclosing trail's afterwards.
func (c *Client) run(n *trailNode, fn func(), restore bool) {
	var outer *trailNode
	if restore {
		outer = currentTrail()
	}
	if !c.opts.DisableLabels {
		setLabels(n)
	}
	defer c.finish(n, outer, restore)
	runTrail(n, fn)
}

// background has no labels; setting it clears a goroutine's labels.
var background = context.Background()

// setLabels makes the goroutine's pprof labels those of trail n, or none.
// pprof offers no way to read a goroutine's labels, so labels set by other
// code on a goroutine that runs Wrap'd work are replaced while it runs and
// cleared after it (as pprof.Do would do with a fresh context).
func setLabels(n *trailNode) {
	if n != nil {
		pprof.SetGoroutineLabels(n.labels)
	} else {
		pprof.SetGoroutineLabels(background)
	}
}

// Group is errgroup.Group with trails: each Go records the caller's stack
// and trail, and the first error cancels the group's context. The zero
// Group is valid, has no limit, does not cancel on error, and reports to
// the default client. A Group must not be copied after first use.
type Group struct {
	c      *Client
	cancel context.CancelCauseFunc
	wg     sync.WaitGroup
	sem    chan struct{}

	errOnce sync.Once
	err     error
}

// NewGroup returns a Group and a context derived from ctx that is canceled
// when a function passed to Go first returns an error or when Wait returns.
func NewGroup(ctx context.Context) (*Group, context.Context) {
	return CurrentClient().NewGroup(ctx)
}

// NewGroup is the package-level NewGroup for this client.
func (c *Client) NewGroup(ctx context.Context) (*Group, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Group{c: c, cancel: cancel}, ctx
}

func (g *Group) client() *Client {
	if g.c != nil {
		return g.c
	}
	return CurrentClient()
}

// SetLimit limits the number of active goroutines in the group to n; a
// negative n removes the limit. It must not be called while goroutines in
// the group are active.
func (g *Group) SetLimit(n int) {
	if n < 0 {
		g.sem = nil
		return
	}
	if len(g.sem) != 0 {
		panic("backtrail: Group.SetLimit while goroutines are active")
	}
	g.sem = make(chan struct{}, n)
}

// Go runs fn in a new goroutine that carries the caller's stack and trail,
// blocking first while the group is at its limit.
//
//go:noinline
func (g *Group) Go(fn func() error) {
	if g.sem != nil {
		g.sem <- struct{}{}
	}
	g.start(fn)
}

// TryGo is Go that returns false instead of blocking when the group is at
// its limit.
//
//go:noinline
func (g *Group) TryGo(fn func() error) bool {
	if g.sem != nil {
		select {
		case g.sem <- struct{}{}:
		default:
			return false
		}
	}
	g.start(fn)
	return true
}

//go:noinline
func (g *Group) start(fn func() error) {
	c := g.client()
	var s Stack
	parent := captureSubmit(1, &s) // start's caller is Go or TryGo

	n := newHop(&s, parent)
	g.wg.Add(1)
	go c.run(n, func() {
		defer g.done()
		if err := fn(); err != nil {
			g.errOnce.Do(func() {
				g.err = err
				if g.cancel != nil {
					g.cancel(err)
				}
			})
		}
	}, false)
}

func (g *Group) done() {
	if g.sem != nil {
		<-g.sem
	}
	g.wg.Done()
}

// Wait blocks until every function started with Go has returned, then
// returns the first non-nil error, if any.
func (g *Group) Wait() error {
	g.wg.Wait()
	if g.cancel != nil {
		g.cancel(g.err)
	}
	return g.err
}
