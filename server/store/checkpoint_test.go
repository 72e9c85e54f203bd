package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/backtrail/backtrail/server"
)

// TestCheckpointRestartsWAL: commits leave the WAL to the checkpointer
// (no automatic checkpoint at 1,000 pages), and a checkpoint at the
// write gate copies every frame, so that the next write transaction
// starts the WAL over.
func TestCheckpointRestartsWAL(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "backtrail.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Stop the background checkpointer: the test checkpoints by itself.
	close(db.stop)
	<-db.stopped
	db.stop = nil

	p, err := db.CreateProject(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	accept := func(first, n int, size int) {
		t.Helper()
		var evs []*server.Incoming
		for i := first; i < first+n; i++ {
			raw := make([]byte, size) // random: compression keeps its size
			rand.Read(raw)
			evs = append(evs, &server.Incoming{ProjectID: p.ID, EventID: fmt.Sprintf("%032x", i), Format: server.FormatReport, Raw: raw, Received: time.Now()})
		}
		if _, err := db.Accept(ctx, evs); err != nil {
			t.Fatal(err)
		}
	}
	// 80 events of 64 KB in 8 transactions: about 1,300 pages.
	for i := range 8 {
		accept(i*10, 10, 64<<10)
	}
	frames, copied, err := db.checkpoint(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if frames <= 1000 || copied != frames {
		t.Fatalf("after 5 MB of commits, checkpoint at the gate: %d frames in the WAL, %d copied; want > 1000 (no automatic checkpoint), all copied", frames, copied)
	}
	accept(80, 1, 100)
	after, _, err := walCheckpoint(ctx, db.r)
	if err != nil {
		t.Fatal(err)
	}
	if after >= frames || after > 20 {
		t.Errorf("one small event after the checkpoint: %d frames in the WAL, want a few (it starts over; was %d)", after, frames)
	}
	// Below the threshold the checkpoint stays beside the writer and the
	// WAL keeps its frames.
	accept(81, 10, 64<<10)
	f2, c2, err := db.checkpoint(ctx, walRestartFrames)
	if err != nil {
		t.Fatal(err)
	}
	if f2 <= after || c2 != f2 {
		t.Errorf("checkpoint below the threshold: %d frames, %d copied; want more than %d, all copied", f2, c2, after)
	}
}
