package store

import (
	"context"
	"database/sql"
	"time"
)

// SQLite checkpoints: copying the WAL back into the database file.
//
// By default SQLite checkpoints in the COMMIT that takes the WAL past
// 1,000 pages, with an fsync of the WAL and one of the database file. At
// 2,000 events/s that was several commits a second taking 10–25 ms
// longer, while every accept waited for the writer. So the connections
// run with wal_autocheckpoint(0), and a goroutine of the DB checkpoints
// beside the writer instead: a PASSIVE checkpoint copies the frames
// already committed while new transactions keep appending. Durability is
// as before: a transaction is in the WAL when its COMMIT returns, and a
// checkpoint syncs the WAL before it copies anything.
//
// The WAL starts over from its beginning only when a write transaction
// begins with every frame copied, which constant writes rarely allow. So
// once the WAL holds walRestartFrames frames, the checkpointer takes a
// turn at the write gate and copies the last frames there, and the next
// write transaction starts the WAL over. That bounds the WAL at about
// walRestartFrames pages. The writers wait meanwhile, so the checkpointer
// first copies again beside them until the frames appended during a pass
// are few (gatedFrames). Even so the copy at the gate held it 3–20 ms in
// the load benchmark, mostly in its two fsyncs, so it should be rare: at
// 2,000 events/s the WAL grew by 15,000 frames (60 MB) a second, and
// walRestartFrames makes that a stop about every 2 s, with a WAL of at
// most about 130 MB.

const (
	// checkpointEvery is how often the checkpointer copies the WAL.
	checkpointEvery = 200 * time.Millisecond
	// walRestartFrames is the WAL size, in frames (pages), at which the
	// checkpointer stops the writers for a moment to let it start over.
	walRestartFrames = 32768
	// gatedFrames is how many frames may be left for the copy at the
	// gate, and catchUpPasses how many passes beside the writers try to
	// get there first.
	gatedFrames   = 256
	catchUpPasses = 4
)

// checkpoints runs the checkpointer until db.stop is closed.
func (db *DB) checkpoints() {
	defer close(db.stopped)
	t := time.NewTicker(checkpointEvery)
	defer t.Stop()
	for {
		select {
		case <-db.stop:
			return
		case <-t.C:
		}
		// Errors are left for the next tick: a failed checkpoint loses
		// nothing, the frames stay in the WAL.
		db.checkpoint(context.Background(), walRestartFrames)
	}
}

// checkpoint copies the WAL into the database file beside the writer,
// and, once the WAL has grown to restartAt frames, copies the rest at the
// write gate so that the next write transaction starts the WAL over. It
// returns the frames in the WAL and how many of them are copied, from the
// last pass.
func (db *DB) checkpoint(ctx context.Context, restartAt int) (frames, copied int, err error) {
	// A reader connection: the writer's stays free for transactions.
	if frames, copied, err = walCheckpoint(ctx, db.r); err != nil || frames < restartAt {
		return frames, copied, err
	}
	for range catchUpPasses {
		before := frames
		if frames, copied, err = walCheckpoint(ctx, db.r); err != nil {
			return frames, copied, err
		}
		if frames-before <= gatedFrames {
			break
		}
	}
	db.gate.lock(false)
	defer db.gate.unlock()
	return walCheckpoint(ctx, db.w)
}

// walCheckpoint runs a PASSIVE checkpoint on a connection of c.
func walCheckpoint(ctx context.Context, c *sql.DB) (frames, copied int, err error) {
	var busy int
	err = c.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &frames, &copied)
	return frames, copied, err
}
