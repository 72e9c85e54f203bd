// Package progress draws a one-line progress bar on a terminal. On anything
// else (a pipe, a file, a CI log) it draws nothing, so output that machines
// read stays clean.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Bar is a progress bar. Its methods are safe for concurrent use; a nil Bar
// does nothing.
type Bar struct {
	w     io.Writer
	label string
	total int64
	start time.Time

	mu   sync.Mutex // guards done and last
	done int64
	last time.Time
}

// New returns a bar that draws on w when enabled (w is a terminal), else
// nil. total is the amount of work; 0 means unknown.
func New(w io.Writer, enabled bool, label string, total int64) *Bar {
	if !enabled {
		return nil
	}
	return &Bar{w: w, label: label, total: total, start: time.Now()}
}

// SetTotal changes the amount of work, for work whose size is learnt late.
func (b *Bar) SetTotal(total int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.total = total
	b.mu.Unlock()
}

// Set records that done units of work are complete and redraws at most ten
// times a second.
func (b *Bar) Set(done int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done = done
	if now := time.Now(); now.Sub(b.last) >= 100*time.Millisecond || done == b.total {
		b.last = now
		b.draw(now)
	}
}

func (b *Bar) draw(now time.Time) {
	const width = 30
	el := now.Sub(b.start).Truncate(100 * time.Millisecond)
	if b.total <= 0 {
		fmt.Fprintf(b.w, "\r%s %d (%s)", b.label, b.done, el)
		return
	}
	frac := float64(b.done) / float64(b.total)
	frac = min(max(frac, 0), 1)
	n := int(frac * width)
	fmt.Fprintf(b.w, "\r%s [%s%s] %3.0f%% %d/%d (%s)", b.label, strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, b.done, b.total, el)
}

// Finish draws the final state and ends the line.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draw(time.Now())
	fmt.Fprintln(b.w)
}
