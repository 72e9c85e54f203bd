package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/backtrail/backtrail/server"

	"github.com/klauspost/compress/zstd"
)

// TestDecompress: values compressed now (S2) and values stored before
// (zstd frames) both decode to what was stored, whatever their size.
func TestDecompress(t *testing.T) {
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "backtrail.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	old, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithNoEntropyCompression(true))
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 5000)
	rand.Read(random)
	inputs := map[string][]byte{
		"empty":  {},
		"short":  []byte("{}"),
		"40 B":   bytes.Repeat([]byte("x"), 40), // the length zstd's magic would give
		"json":   bytes.Repeat([]byte(`{"function":"main","file":"main.cpp","line":94},`), 600),
		"random": random,
		"magic":  append([]byte{0x28, 0xb5, 0x2f, 0xfd}, random[:36]...),
	}
	for name, in := range inputs {
		for _, c := range []struct {
			format string
			stored []byte
		}{
			{"s2", compress(in)},
			{"zstd", old.EncodeAll(in, nil)},
		} {
			out, err := db.decompress(c.stored)
			if err != nil || !bytes.Equal(out, in) {
				t.Errorf("%s, stored as %s (%d bytes): decompress = %d bytes, %v; want the %d bytes stored", name, c.format, len(c.stored), len(out), err, len(in))
			}
		}
	}
	if _, err := db.decompress([]byte{0x28, 0xb5, 0x2f}); err == nil {
		t.Errorf("decompress of a truncated value: no error")
	}
}

// TestClaimDamagedPayload: a stored payload that no longer decodes fails
// its own event when processed, while the events claimed with it are
// read back intact and the queue moves on.
func TestClaimDamagedPayload(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "backtrail.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := db.CreateProject(ctx, "p")
	if err != nil {
		t.Fatal(err)
	}
	var evs []*server.Incoming
	for i := range 3 {
		evs = append(evs, &server.Incoming{ProjectID: p.ID, EventID: fmt.Sprintf("%032x", i+1), Format: server.FormatReport,
			Raw: fmt.Appendf(nil, `{"n":%d}`, i+1), Received: time.Now()})
	}
	if _, err := db.Accept(ctx, evs); err != nil {
		t.Fatal(err)
	}
	// A length that the block does not hold: S2 rejects it.
	if _, err := db.w.ExecContext(ctx, `UPDATE events SET raw = ? WHERE event_id = ?`, []byte{0x7f, 0x00, 0x01}, evs[1].EventID); err != nil {
		t.Fatal(err)
	}
	qs, err := db.Claim(ctx, "w", 10, time.Minute)
	if err != nil {
		t.Fatalf("Claim with one damaged payload: %v", err)
	}
	if len(qs) != 3 {
		t.Fatalf("claimed %d events, want 3", len(qs))
	}
	for i, q := range qs {
		switch {
		case i == 1 && (q.Err == nil || !strings.Contains(q.Err.Error(), "stored payload") || q.Raw != nil):
			t.Errorf("damaged event: Err %v, Raw %q; want an error naming the stored payload and no bytes", q.Err, q.Raw)
		case i != 1 && (q.Err != nil || !bytes.Equal(q.Raw, evs[i].Raw)):
			t.Errorf("event %d: Err %v, Raw %q; want %q", i, q.Err, q.Raw, evs[i].Raw)
		}
	}
	done := []*server.Processed{{ID: qs[1].ID, ProjectID: p.ID, Worker: "w", Attempt: qs[1].Attempts, Err: qs[1].Err}}
	if err := db.Complete(ctx, done); err != nil {
		t.Fatal(err)
	}
	e, err := db.Event(ctx, p.ID, evs[1].EventID)
	if err != nil {
		t.Fatal(err)
	}
	if e.Error == "" {
		t.Errorf("damaged event after Complete: %+v, want its error recorded", e)
	}
	if n, err := db.Pending(ctx); err != nil || n != 2 {
		t.Errorf("Pending = %d, %v; want the 2 intact events", n, err)
	}
}
