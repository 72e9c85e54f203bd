package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/backtrail/backtrail/server"
	"github.com/backtrail/backtrail/server/blob"
)

var ctx = context.Background()

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func TestPutOpenDelete(t *testing.T) {
	d, err := blob.Open(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range [][]byte{nil, []byte("hello"), bytes.Repeat([]byte{0xcc}, 3<<20)} {
		addr, n, err := d.Put(ctx, bytes.NewReader(content))
		if err != nil || addr != sum(content) || n != int64(len(content)) {
			t.Fatalf("Put(%d bytes) = %s, %d, %v; want %s", len(content), addr, n, err, sum(content))
		}
		again, _, err := d.Put(ctx, bytes.NewReader(content))
		if err != nil || again != addr {
			t.Errorf("Put of the same content: %s, %v", again, err)
		}
		rc, err := d.Open(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, content) {
			t.Errorf("Open(%s): %d bytes, %v", addr, len(got), err)
		}
		p, err := d.Path(ctx, addr)
		if err != nil {
			t.Fatal(err)
		}
		if onDisk, _ := os.ReadFile(p); !bytes.Equal(onDisk, content) {
			t.Errorf("Path(%s) = %s holds other bytes", addr, p)
		}
		if err := d.Delete(ctx, addr); err != nil {
			t.Fatal(err)
		}
		if _, err := d.Open(ctx, addr); server.ErrorCode(err) != server.ENOTFOUND {
			t.Errorf("Open after Delete: %v, want not found", err)
		}
		if _, err := d.Path(ctx, addr); server.ErrorCode(err) != server.ENOTFOUND {
			t.Errorf("Path after Delete: %v, want not found", err)
		}
		if err := d.Delete(ctx, addr); err != nil {
			t.Errorf("Delete of absent content: %v", err)
		}
	}
}

// TestBadAddress checks that addresses that are not SHA-256 hex are
// refused before they name a path.
func TestBadAddress(t *testing.T) {
	d, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{
		"", "abc", strings.Repeat("g", 64), strings.Repeat("a", 63), strings.Repeat("a", 65),
		"../" + strings.Repeat("a", 61), "aa/../../../../../../../../etc/passwd" + strings.Repeat("a", 27),
	} {
		if _, err := d.Open(ctx, addr); server.ErrorCode(err) != server.EINVALID {
			t.Errorf("Open(%q): %v, want invalid", addr, err)
		}
		if _, err := d.Path(ctx, addr); server.ErrorCode(err) != server.EINVALID {
			t.Errorf("Path(%q): %v, want invalid", addr, err)
		}
		if err := d.Delete(ctx, addr); server.ErrorCode(err) != server.EINVALID {
			t.Errorf("Delete(%q): %v, want invalid", addr, err)
		}
	}
}

type failingReader struct{ n int }

func (r *failingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, errors.New("connection reset")
	}
	k := min(len(p), r.n)
	r.n -= k
	return k, nil
}

// TestPutFails checks that a failed Put leaves nothing behind.
func TestPutFails(t *testing.T) {
	dir := t.TempDir()
	d, err := blob.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := d.Put(ctx, &failingReader{n: 100 << 10}); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

// TestConcurrentPut stores the same and different content from many
// goroutines: every Put answers the right address and every file is whole.
func TestConcurrentPut(t *testing.T) {
	d, err := blob.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	contents := [][]byte{bytes.Repeat([]byte("a"), 1<<20), bytes.Repeat([]byte("b"), 1<<20), []byte("c")}
	var wg sync.WaitGroup
	errs := make(chan error, 30)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := contents[i%len(contents)]
			addr, _, err := d.Put(ctx, bytes.NewReader(c))
			if err == nil && addr != sum(c) {
				err = errors.New("wrong address " + addr)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, c := range contents {
		p, err := d.Path(ctx, sum(c))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, c) {
			t.Errorf("%s holds %d bytes, want %d", p, len(got), len(c))
		}
	}
}
