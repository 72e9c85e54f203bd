package sentry

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// Default limits, modeled on the defaults of Sentry's Relay: it accepts
// events of at most 1 MiB (limits.max_event_size) and whole envelopes of
// at most 100 MiB (limits.max_envelope_size); request bodies as sent are
// held to 20 MiB.
const (
	DefaultCompressed   = 20 << 20  // bytes of request body as sent
	DefaultDecompressed = 100 << 20 // bytes of request body after Content-Encoding is undone
	DefaultEvent        = 1 << 20   // bytes of one event payload
	DefaultItems        = 1000      // items in one envelope
)

// Limits bounds what this package reads. A zero or negative field means its
// default (DefaultCompressed and so on).
type Limits struct {
	Compressed   int64 // request body as read from the connection
	Decompressed int64 // request body after decompression; the size of a whole envelope
	Event        int64 // one event: an envelope's event item, or a /store/ body
	Items        int   // items in one envelope
}

func (l Limits) compressed() int64   { return orDefault(l.Compressed, DefaultCompressed) }
func (l Limits) decompressed() int64 { return orDefault(l.Decompressed, DefaultDecompressed) }
func (l Limits) event() int64        { return orDefault(l.Event, DefaultEvent) }

func (l Limits) items() int {
	if l.Items <= 0 {
		return DefaultItems
	}
	return l.Items
}

func orDefault(v, def int64) int64 {
	if v <= 0 {
		return def
	}
	return v
}

// maxEncodings bounds how many Content-Encodings one body may stack.
const maxEncodings = 4

// Body reads r.Body and undoes its Content-Encoding: none or "identity",
// "gzip" (or "x-gzip"), "deflate" (zlib-wrapped as RFC 9110 says, or raw
// DEFLATE as some clients send it), "zstd" or "br". Several encodings, as in
// "gzip, br", are undone last first.
//
// Body reads at most lim.Compressed bytes from the connection and returns at
// most lim.Decompressed bytes; beyond either it stops reading and returns an
// error wrapping ErrTooLarge, as it does for an *http.MaxBytesError from a
// reader installed by http.MaxBytesReader. Memory use is bounded by
// lim.Decompressed and the decoders' windows (zstd's is capped at
// lim.Decompressed; brotli's is at most 16 MiB), never by what the
// compressed data claims. Corrupt or truncated data, and encodings Body
// does not know, give an error wrapping ErrBadBody. Errors reading the
// connection itself are returned wrapped as they are.
//
// Body does not close r.Body; the HTTP server does.
func Body(r *http.Request, lim Limits) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	maxIn, maxOut := lim.compressed(), lim.decompressed()
	if r.ContentLength > maxIn {
		return nil, fmt.Errorf("%w: body of %d bytes, limit %d", ErrTooLarge, r.ContentLength, maxIn)
	}
	encodings, err := contentEncodings(r.Header)
	if err != nil {
		return nil, err
	}
	src := &source{r: r.Body, left: maxIn + 1, limit: maxIn}
	var rd io.Reader = src
	for i := len(encodings) - 1; i >= 0; i-- {
		dec, closeFn, err := decoder(encodings[i], rd, maxOut)
		if err != nil {
			if src.err != nil {
				return nil, src.err
			}
			return nil, fmt.Errorf("%w: %s: %v", ErrBadBody, encodings[i], err)
		}
		if closeFn != nil {
			defer closeFn()
		}
		rd = dec
	}
	out, err := readAtMost(rd, maxOut, r.ContentLength, len(encodings) == 0)
	if src.err != nil { // the connection failed or the body crossed the limit
		return nil, src.err
	}
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, err
		}
		if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) || errors.Is(err, zstd.ErrFrameSizeExceeded) {
			return nil, fmt.Errorf("%w: zstd: %v", ErrTooLarge, err)
		}
		return nil, fmt.Errorf("%w: %s: %v", ErrBadBody, strings.Join(encodings, ", "), err)
	}
	return out, nil
}

// contentEncodings returns the encodings of h's Content-Encoding, in the
// order they were applied, without "identity".
func contentEncodings(h http.Header) ([]string, error) {
	var encs []string
	for _, v := range h.Values("Content-Encoding") {
		for e := range strings.SplitSeq(v, ",") {
			e = strings.ToLower(strings.TrimSpace(e))
			if e == "" || e == "identity" {
				continue
			}
			switch e {
			case "gzip", "x-gzip", "deflate", "zstd", "br":
			default:
				return nil, fmt.Errorf("%w: unsupported Content-Encoding %q", ErrBadBody, e)
			}
			if len(encs) == maxEncodings {
				return nil, fmt.Errorf("%w: more than %d Content-Encodings", ErrBadBody, maxEncodings)
			}
			encs = append(encs, e)
		}
	}
	return encs, nil
}

// decoder returns a reader that undoes encoding enc on rd, and a function to
// release it (nil if there is nothing to release).
func decoder(enc string, rd io.Reader, maxOut int64) (io.Reader, func(), error) {
	switch enc {
	case "gzip", "x-gzip":
		z, err := gzip.NewReader(rd)
		if err != nil {
			return nil, nil, err
		}
		return z, nil, nil
	case "deflate":
		br := bufio.NewReader(rd)
		if h, err := br.Peek(2); err == nil && isZlibHeader(h[0], h[1]) {
			z, err := zlib.NewReader(br)
			if err != nil {
				return nil, nil, err
			}
			return z, nil, nil
		}
		f := flate.NewReader(br)
		return f, func() { f.Close() }, nil
	case "zstd":
		window := max(uint64(maxOut), zstd.MinWindowSize)
		d, err := zstd.NewReader(rd,
			zstd.WithDecoderConcurrency(1), // decode in this goroutine
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(min(window, zstd.MaxWindowSize)),
			zstd.WithDecoderMaxMemory(uint64(maxOut)))
		if err != nil {
			return nil, nil, err
		}
		return d, d.Close, nil
	case "br":
		return brotli.NewReader(rd), nil, nil
	}
	return nil, nil, fmt.Errorf("unsupported encoding %q", enc)
}

// isZlibHeader reports whether cmf and flg start a zlib stream (RFC 1950
// §2.2): DEFLATE with a window of at most 32 KiB and a valid check value.
// Raw DEFLATE data starts with a block header, which rarely passes this test.
func isZlibHeader(cmf, flg byte) bool {
	return cmf&0x0f == 8 && cmf>>4 <= 7 && (uint16(cmf)<<8|uint16(flg))%31 == 0
}

// maxPrealloc bounds the buffer allocated up front for a declared
// Content-Length, so that a client cannot make the server hold memory it
// never sends.
const maxPrealloc = 1 << 20

// readAtMost reads rd to its end and fails with ErrTooLarge if that is more
// than limit bytes. sizeHint, when trusted (identity bodies, whose
// Content-Length was checked against the limit), sizes the buffer up front,
// up to maxPrealloc.
func readAtMost(rd io.Reader, limit, sizeHint int64, trustHint bool) ([]byte, error) {
	n := int64(512)
	if trustHint && sizeHint > 0 && sizeHint <= limit && sizeHint < maxPrealloc {
		n = sizeHint + 1 // +1 so that reading EOF does not grow the buffer
	}
	buf := make([]byte, 0, n)
	for {
		if int64(len(buf)) == int64(cap(buf)) {
			// Grow by doubling, but never past limit+1: one byte beyond the
			// limit is enough to know the body is too large.
			c := min(max(2*int64(cap(buf)), 512), limit+1)
			if c <= int64(cap(buf)) {
				return nil, fmt.Errorf("%w: decompressed body over %d bytes", ErrTooLarge, limit)
			}
			nb := make([]byte, len(buf), c)
			copy(nb, buf)
			buf = nb
		}
		m, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		if int64(len(buf)) > limit {
			return nil, fmt.Errorf("%w: decompressed body over %d bytes", ErrTooLarge, limit)
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// source reads the request body for the decoders, counting bytes against
// the compressed limit and remembering the first error that came from the
// connection rather than from the data, so that Body can tell the two apart.
type source struct {
	r     io.Reader
	left  int64 // bytes that may still be read, plus one to detect overflow
	limit int64
	err   error
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if s.left <= 0 {
		s.err = fmt.Errorf("%w: body over %d bytes", ErrTooLarge, s.limit)
		return n, s.err
	}
	if err != nil && err != io.EOF {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			s.err = fmt.Errorf("%w: body over %d bytes", ErrTooLarge, mbe.Limit)
		} else {
			s.err = fmt.Errorf("sentry: read body: %w", err)
		}
		return n, s.err
	}
	return n, err
}
