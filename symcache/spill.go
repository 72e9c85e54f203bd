package symcache

import (
	"bufio"
	"errors"
	"io"
	"os"
)

// spill is an append-only byte store for tables a Builder writes out only
// at the end. It stays in memory up to spillMem bytes, then moves to an
// unlinked temporary file, so that building a big symcache holds neither
// its location records nor its range entries nor its strings in memory:
// the file's pages are the kernel's to evict. Where no temporary file can
// be made it stays in memory.
type spill struct {
	n    int64 // bytes written
	mem  []byte
	f    *os.File
	name string // of f, when it could not be unlinked while open
	w    *bufio.Writer
	err  error
	buf  []byte
}

const spillMem = 1 << 20

func (s *spill) write(p []byte) {
	s.n += int64(len(p))
	if s.f == nil && !s.move(len(p)) {
		s.mem = append(s.grown(len(p)), p...)
		return
	}
	if _, err := s.w.Write(p); err != nil && s.err == nil {
		s.err = err
	}
}

func (s *spill) writeString(p string) {
	s.n += int64(len(p))
	if s.f == nil && !s.move(len(p)) {
		s.mem = append(s.grown(len(p)), p...)
		return
	}
	if _, err := s.w.WriteString(p); err != nil && s.err == nil {
		s.err = err
	}
}

// grown returns the memory store for n more bytes to be appended. Once it
// holds 64 KB it is grown to spillMem at once rather than by appends
// (past spillMem, where no temporary file could be made, append grows it):
// doubling would copy it again and again into freshly faulted pages, and
// room never written is never touched. Small stores (small symcaches)
// stay small.
func (s *spill) grown(n int) []byte {
	if len(s.mem)+n > cap(s.mem) && cap(s.mem) >= 64<<10 && cap(s.mem) < spillMem {
		s.mem = append(make([]byte, 0, spillMem), s.mem...)
	}
	return s.mem
}

// move moves the store to a temporary file when n more bytes would take
// it past spillMem, and reports whether it is in a file.
func (s *spill) move(n int) bool {
	if len(s.mem)+n <= spillMem || s.err != nil {
		return false
	}
	f, err := os.CreateTemp("", "symcache-*")
	if err != nil {
		s.err = err // remembered only to stop retrying; the data stays in memory
		return false
	}
	if os.Remove(f.Name()) != nil {
		s.name = f.Name() // systems that cannot unlink open files
	}
	s.f, s.w = f, bufio.NewWriterSize(f, 64<<10)
	if _, err := s.w.Write(s.mem); err != nil {
		s.err = err
	}
	s.mem = nil
	return true
}

// flush writes out what is buffered and returns the error that lost data,
// if any. Reading (copyTo, each) needs it first, and is then safe from
// several goroutines.
func (s *spill) flush() error {
	if s.f != nil && s.err == nil {
		s.err = s.w.Flush()
	}
	return s.failed()
}

// failed returns the error that lost data, if any, once flushed.
func (s *spill) failed() error {
	if s.f == nil {
		return nil
	}
	return s.err
}

// copyTo writes n bytes from offset off to w.
func (s *spill) copyTo(w io.Writer, off, n int64) error {
	if s.f == nil {
		_, err := w.Write(s.mem[off : off+n])
		return err
	}
	if err := s.failed(); err != nil {
		return err
	}
	if s.buf == nil {
		s.buf = make([]byte, 64<<10)
	}
	for n > 0 {
		b := s.buf[:min(int64(len(s.buf)), n)]
		if _, err := s.f.ReadAt(b, off); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		off += int64(len(b))
		n -= int64(len(b))
	}
	return nil
}

// each calls fn on the size-byte records from lo up to hi, in order.
func (s *spill) each(size int, lo, hi int64, fn func([]byte)) error {
	if s.f == nil {
		for p := lo * int64(size); p < hi*int64(size); p += int64(size) {
			fn(s.mem[p : p+int64(size)])
		}
		return nil
	}
	if err := s.failed(); err != nil {
		return err
	}
	// Whole records at a time, not an io.ReadFull per record through a
	// buffered reader: reading the 211 MB of a 1 GB build's locations
	// took 0.07 CPU-s that way, 0.04 now.
	buf := make([]byte, (64<<10)/size*size)
	for off, end := lo*int64(size), hi*int64(size); off < end; {
		chunk := buf[:min(int64(len(buf)), end-off)]
		if _, err := s.f.ReadAt(chunk, off); err != nil {
			return err
		}
		for p := 0; p < len(chunk); p += size {
			fn(chunk[p : p+size])
		}
		off += int64(len(chunk))
	}
	return nil
}

func (s *spill) close() error {
	if s.f == nil {
		s.mem = nil
		return nil
	}
	err := s.f.Close()
	if s.name != "" {
		err = errors.Join(err, os.Remove(s.name))
	}
	s.f, s.name, s.w = nil, "", nil
	return err
}
