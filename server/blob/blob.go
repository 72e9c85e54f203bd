// Package blob is a content-addressed file store on a local directory:
// each content lives once, at a path derived from its SHA-256. Debug files
// and other large uploads go here; the database refers to them by address.
// The directory may be shared by several server replicas (a network file
// system); writes are atomic renames, so readers never see partial files.
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/backtrail/backtrail/server"
)

// Dir stores blobs under a directory, as <dir>/<ab>/<cdef…> for the
// address abcdef…. It is safe for concurrent use, also by several
// processes.
type Dir struct {
	root string
}

var _ server.Blobs = (*Dir)(nil)

// Open returns the store rooted at dir, creating it.
func Open(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Dir{root: dir}, nil
}

func (d *Dir) path(addr string) (string, error) {
	if len(addr) != 64 {
		return "", server.Errorf(server.EINVALID, "blob address %q is not a SHA-256", addr)
	}
	if _, err := hex.DecodeString(addr); err != nil {
		return "", server.Errorf(server.EINVALID, "blob address %q is not a SHA-256", addr)
	}
	return filepath.Join(d.root, addr[:2], addr[2:]), nil
}

// Put copies r into the store and returns its address and size. The data
// is written to a temporary file, synced, and renamed into place.
func (d *Dir) Put(ctx context.Context, r io.Reader) (string, int64, error) {
	tmp, err := os.CreateTemp(d.root, ".put-*")
	if err != nil {
		return "", 0, err
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), r)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	addr := hex.EncodeToString(h.Sum(nil))
	p, _ := d.path(addr)
	if _, err := os.Stat(p); err == nil {
		return addr, n, nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", 0, err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		return "", 0, err
	}
	return addr, n, nil
}

// Open opens the content at addr.
func (d *Dir) Open(ctx context.Context, addr string) (io.ReadCloser, error) {
	p, err := d.path(addr)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, server.Errorf(server.ENOTFOUND, "no blob %s", addr)
	}
	return f, err
}

// Path returns the file holding the content at addr.
func (d *Dir) Path(ctx context.Context, addr string) (string, error) {
	p, err := d.path(addr)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
		return "", server.Errorf(server.ENOTFOUND, "no blob %s", addr)
	}
	return p, nil
}

// Delete removes the content at addr; removing absent content is not an
// error.
func (d *Dir) Delete(ctx context.Context, addr string) error {
	p, err := d.path(addr)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
