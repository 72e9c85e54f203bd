package backtrail

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/backtrail/backtrail/internal/backoff"
)

// The uploader drains the spool, oldest report first, one request at a
// time, from a single goroutine:
//
//   - 2xx: delivered; the report is removed.
//   - 4xx other than 408 and 429: the server will never take it; the report
//     is dropped and the drop logged.
//   - 408, 429, 5xx, network errors: the report stays; the uploader waits
//     for the Retry-After header if the server sent one, else for an
//     exponentially growing, jittered delay (internal/backoff), and ignores
//     new reports until then, so a struggling server is not pressed harder.
//
// Reports are POSTed gzip-compressed to Endpoint + "/api/v1/reports" with
// "Authorization: Bearer <Key>".

// ReportsPath is where the server accepts reports, below Options.Endpoint.
const ReportsPath = "/api/v1/reports"

const (
	// shouldUploadRecheck is how often a vetoed upload asks ShouldUpload
	// again when nothing else wakes the uploader.
	shouldUploadRecheck = 5 * time.Second
	// flushPoll is how often Flush looks at the spool.
	flushPoll = 10 * time.Millisecond
)

type uploader struct {
	c      *Client
	url    string
	hc     *http.Client
	policy backoff.Policy

	wake chan struct{} // buffered(1): a report was spooled, or Flush wants progress
	ctx  context.Context
	stop context.CancelFunc
	done chan struct{}

	attempt int // consecutive failures, for the backoff; loop goroutine only
}

func newUploader(c *Client) (*uploader, error) {
	u, err := url.Parse(c.opts.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("backtrail: endpoint %q is not an http(s) URL", c.opts.Endpoint)
	}
	hc := c.opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	up := &uploader{
		c:      c,
		url:    strings.TrimSuffix(c.opts.Endpoint, "/") + ReportsPath,
		hc:     hc,
		policy: backoff.Policy{Base: c.opts.RetryBase, Max: c.opts.RetryMax, Jitter: 0.2},
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	up.ctx, up.stop = context.WithCancel(context.Background())
	go up.loop()
	return up, nil
}

func (u *uploader) notify() {
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (u *uploader) close() error {
	u.stop()
	<-u.done
	return nil
}

// flush waits until the spool is empty. It polls rather than coordinating
// with the loop: the spool is the truth, and it may be shared with other
// processes.
func (u *uploader) flush(ctx context.Context) error {
	t := time.NewTicker(flushPoll)
	defer t.Stop()
	for {
		ents, err := u.c.spool.List()
		if err != nil {
			return err
		}
		if len(ents) == 0 {
			return nil
		}
		u.notify()
		select {
		case <-ctx.Done():
			return fmt.Errorf("backtrail: flush: %d reports still spooled: %w", len(ents), ctx.Err())
		case <-u.done:
			return errors.New("backtrail: flush: client closed")
		case <-t.C:
		}
	}
}

func (u *uploader) loop() {
	defer close(u.done)
	for {
		wait := u.drain()
		var timer <-chan time.Time
		if wait > 0 {
			t := time.NewTimer(wait)
			timer = t.C
			select { // backing off: only the timer or Close end the wait
			case <-timer:
			case <-u.ctx.Done():
				t.Stop()
				return
			}
			continue
		}
		t := time.NewTimer(shouldUploadRecheck)
		select {
		case <-u.wake:
		case <-t.C:
		case <-u.ctx.Done():
			t.Stop()
			return
		}
		t.Stop()
	}
}

// drain sends spooled reports until the spool is empty (returns 0), the
// network is vetoed (returns 0; the recheck timer retries), or a send must
// be retried later (returns the delay).
func (u *uploader) drain() time.Duration {
	for u.ctx.Err() == nil {
		ents, err := u.c.spool.List()
		if err != nil || len(ents) == 0 {
			return 0
		}
		e := ents[0]
		if f := u.c.opts.ShouldUpload; f != nil && !f() {
			return 0
		}
		data, err := u.c.spool.Read(e.Name)
		if err != nil {
			continue // damaged (and now removed) or taken by another process
		}
		retry, delay, err := u.send(data)
		switch {
		case err == nil:
			u.c.spool.Remove(e.Name)
			u.attempt = 0
		case !retry:
			u.c.log.Warn("backtrail: report dropped", "report", e.Name, "err", err)
			u.c.spool.Remove(e.Name)
			u.attempt = 0
		default:
			if delay < 0 {
				delay = u.policy.Delay(u.attempt)
			}
			u.attempt++
			u.c.log.Info("backtrail: upload failed; will retry", "report", e.Name, "in", delay, "err", err)
			return max(delay, time.Millisecond)
		}
	}
	return 0
}

// send POSTs one report. It returns whether a failure is worth retrying
// and, when the server said so with Retry-After, how long to wait (else -1).
func (u *uploader) send(data []byte) (retry bool, delay time.Duration, err error) {
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	zw.Write(data)
	zw.Close()
	req, err := http.NewRequestWithContext(u.ctx, http.MethodPost, u.url, &body)
	if err != nil {
		return false, -1, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("User-Agent", SDKName+"/"+SDKVersion)
	if u.c.opts.Key != "" {
		req.Header.Set("Authorization", "Bearer "+u.c.opts.Key)
	}
	resp, err := u.hc.Do(req)
	if err != nil {
		return true, -1, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	code := resp.StatusCode
	if code >= 200 && code < 300 {
		return false, -1, nil
	}
	err = fmt.Errorf("server answered %s", resp.Status)
	if code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500 {
		delay = -1
		if d, ok := backoff.ParseRetryAfter(resp.Header.Get("Retry-After"), u.c.now()); ok {
			delay = d
		}
		return true, delay, err
	}
	return false, -1, err
}
