package process

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/backtrail/backtrail/server"
)

// Upstream fetches debug files the server lacks from debuginfod servers
// (elfutils' protocol: GET <url>/buildid/<build id>/debuginfo), such as a
// distribution's. Fetched files are stored like uploads, so each is fetched
// once; build ids no server has are remembered for NegativeTTL. It is safe
// for concurrent use.
type Upstream struct {
	URLs   []string
	Client *http.Client // default: 30 s timeout
	// NegativeTTL is how long a build id no upstream has is not asked
	// for again (default 10 minutes).
	NegativeTTL time.Duration
	// MaxSize bounds a fetched file (default 2 GiB).
	MaxSize int64

	mu      sync.Mutex // guards missing
	missing map[string]time.Time
}

// Fetch asks each upstream for the file of kind ("debuginfo" or
// "executable") with a GNU build id, stores the first found for the
// project and returns its records. ErrNoSymbols means no upstream has it.
func (u *Upstream) Fetch(ctx context.Context, st server.Store, blobs server.Blobs, projectID int64, buildID, kind string) ([]*server.DebugFile, error) {
	buildID = strings.ToLower(buildID)
	if b, err := hex.DecodeString(buildID); err != nil || len(b) < 4 || len(u.URLs) == 0 {
		return nil, ErrNoSymbols
	}
	key := kind + "/" + buildID
	u.mu.Lock()
	if u.missing == nil {
		u.missing = make(map[string]time.Time)
	}
	if until, ok := u.missing[key]; ok && time.Now().Before(until) {
		u.mu.Unlock()
		return nil, ErrNoSymbols
	}
	u.mu.Unlock()
	client := u.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	max := u.MaxSize
	if max <= 0 {
		max = 2 << 30
	}
	for _, base := range u.URLs {
		req, err := http.NewRequestWithContext(ctx, "GET", strings.TrimRight(base, "/")+"/buildid/"+buildID+"/"+kind, nil)
		if err != nil {
			continue
		}
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			continue
		}
		all, _, err := AddDebugFile(ctx, st, blobs, projectID, buildID+".debug", io.LimitReader(resp.Body, max))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("debuginfod %s: %w", base, err)
		}
		return all, nil
	}
	ttl := u.NegativeTTL
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	u.mu.Lock()
	u.missing[key] = time.Now().Add(ttl)
	u.mu.Unlock()
	return nil, ErrNoSymbols
}
