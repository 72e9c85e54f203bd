package sentry_test

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// The encoders the tests compress bodies with.

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zlibbed(b []byte) []byte {
	var buf bytes.Buffer
	w := zlib.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func deflated(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.DefaultCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func zstded(b []byte) []byte {
	w, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	defer w.Close()
	return w.EncodeAll(b, nil)
}

func brotlied(b []byte) []byte {
	var buf bytes.Buffer
	w := brotli.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// bodyRequest returns a POST with the given body and Content-Encoding.
func bodyRequest(body []byte, encoding string) *http.Request {
	r := httptest.NewRequest("POST", "/api/1/envelope/", bytes.NewReader(body))
	if encoding != "" {
		r.Header.Set("Content-Encoding", encoding)
	}
	return r
}

// testBody is an envelope-like body that compresses well but not trivially.
func testBody() []byte {
	var b bytes.Buffer
	b.WriteString(`{"event_id":"9ec79c33ec9942ab8353589fcb2e04dc"}` + "\n")
	for i := range 2000 {
		fmt.Fprintf(&b, `{"type":"attachment","length":%d}`+"\n%s\n", len(fmt.Sprint(i*i)), fmt.Sprint(i*i))
	}
	return b.Bytes()
}

func TestBodyEncodings(t *testing.T) {
	want := testBody()
	tests := []struct {
		encoding string
		body     []byte
	}{
		{"", want},
		{"identity", want},
		{"gzip", gzipped(want)},
		{"x-gzip", gzipped(want)},
		{"GZip", gzipped(want)},
		{"deflate", zlibbed(want)},  // RFC 9110: zlib
		{"deflate", deflated(want)}, // what some clients send: raw DEFLATE
		{"zstd", zstded(want)},
		{"br", brotlied(want)},
		{"gzip, br", brotlied(gzipped(want))},
		{"identity, zstd", zstded(want)},
		{"deflate,gzip", gzipped(zlibbed(want))},
	}
	for _, tt := range tests {
		t.Run(tt.encoding, func(t *testing.T) {
			got, err := sentry.Body(bodyRequest(tt.body, tt.encoding), sentry.Limits{})
			if err != nil {
				t.Fatalf("Body(%q, %d bytes): %v", tt.encoding, len(tt.body), err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Body(%q) returned %d bytes, want the %d bytes encoded", tt.encoding, len(got), len(want))
			}
			// Exactly at the limits passes; one byte less fails.
			lim := sentry.Limits{Compressed: int64(len(tt.body)), Decompressed: int64(len(want))}
			if _, err := sentry.Body(bodyRequest(tt.body, tt.encoding), lim); err != nil {
				t.Errorf("at the limits %+v: %v", lim, err)
			}
			lim.Decompressed--
			if _, err := sentry.Body(bodyRequest(tt.body, tt.encoding), lim); !errors.Is(err, sentry.ErrTooLarge) {
				t.Errorf("decompressed limit one byte short: %v, want ErrTooLarge", err)
			}
			lim.Decompressed++
			lim.Compressed--
			if _, err := sentry.Body(bodyRequest(tt.body, tt.encoding), lim); !errors.Is(err, sentry.ErrTooLarge) {
				t.Errorf("compressed limit one byte short: %v, want ErrTooLarge", err)
			}
		})
	}
}

func TestBodyErrors(t *testing.T) {
	body := testBody()
	gz := gzipped(body)
	tests := []struct {
		name     string
		encoding string
		body     []byte
		want     error
	}{
		{"truncated gzip", "gzip", gz[:len(gz)/2], sentry.ErrBadBody},
		{"gzip without its trailer", "gzip", gz[:len(gz)-4], sentry.ErrBadBody},
		{"gzip header only", "gzip", gz[:10], sentry.ErrBadBody},
		{"empty gzip", "gzip", nil, sentry.ErrBadBody},
		{"gzip with bad checksum", "gzip", func() []byte { b := bytes.Clone(gz); b[len(b)-8] ^= 0xff; return b }(), sentry.ErrBadBody},
		{"not gzip", "gzip", body, sentry.ErrBadBody},
		{"truncated zlib", "deflate", zlibbed(body)[:100], sentry.ErrBadBody},
		{"truncated zstd", "zstd", zstded(body)[:100], sentry.ErrBadBody},
		{"not zstd", "zstd", body, sentry.ErrBadBody},
		{"truncated br", "br", brotlied(body)[:100], sentry.ErrBadBody},
		{"unknown encoding", "compress", body, sentry.ErrBadBody},
		{"too many encodings", "gzip, gzip, gzip, gzip, gzip", body, sentry.ErrBadBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := sentry.Body(bodyRequest(tt.body, tt.encoding), sentry.Limits{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Body(%q, %d bytes) = %d bytes, %v; want %v", tt.encoding, len(tt.body), len(got), err, tt.want)
			}
		})
	}
}

// TestBodyLimits checks the compressed limit on bodies of unknown length
// (chunked) and of a declared one, and with http.MaxBytesReader.
func TestBodyLimits(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 1000)
	r := bodyRequest(body, "")
	r.ContentLength = -1 // chunked
	if _, err := sentry.Body(r, sentry.Limits{Compressed: 999}); !errors.Is(err, sentry.ErrTooLarge) {
		t.Errorf("chunked body over the limit: %v, want ErrTooLarge", err)
	}
	r = bodyRequest(body, "")
	r.ContentLength = -1
	if got, err := sentry.Body(r, sentry.Limits{Compressed: 1000}); err != nil || len(got) != 1000 {
		t.Errorf("chunked body at the limit: %d bytes, %v", len(got), err)
	}
	if _, err := sentry.Body(bodyRequest(body, ""), sentry.Limits{Compressed: 10}); !errors.Is(err, sentry.ErrTooLarge) {
		t.Errorf("Content-Length over the limit: %v, want ErrTooLarge", err)
	}
	r = bodyRequest(gzipped(body), "gzip")
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 10)
	if _, err := sentry.Body(r, sentry.Limits{}); !errors.Is(err, sentry.ErrTooLarge) {
		t.Errorf("http.MaxBytesReader: %v, want ErrTooLarge", err)
	}
	r = bodyRequest(nil, "")
	r.Body = nil
	if got, err := sentry.Body(r, sentry.Limits{}); got != nil || err != nil {
		t.Errorf("no body: %q, %v", got, err)
	}
}

type failingReader struct{ n int }

var errNetwork = errors.New("connection reset by peer")

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errNetwork
	}
	n := min(len(p), f.n)
	clear(p[:n])
	f.n -= n
	return n, nil
}

// TestBodyReadError checks that an error of the connection is not taken for
// corrupt data.
func TestBodyReadError(t *testing.T) {
	for _, enc := range []string{"", "gzip", "zstd", "br", "deflate"} {
		r := bodyRequest(nil, enc)
		r.Body = io.NopCloser(&failingReader{n: 3})
		r.ContentLength = -1
		_, err := sentry.Body(r, sentry.Limits{})
		if !errors.Is(err, errNetwork) || errors.Is(err, sentry.ErrBadBody) || errors.Is(err, sentry.ErrTooLarge) {
			t.Errorf("Body(%q) with a failing connection: %v; want the connection's error only", enc, err)
		}
	}
}

// TestBodyBomb decompresses bodies of a few hundred kilobytes that expand to
// 1 GiB, with a 1 MiB limit. Body must stop at the limit without allocating
// more than a few times the limit.
func TestBodyBomb(t *testing.T) {
	const limit = 1 << 20
	zeros := make([]byte, 1<<20)
	// Concatenated members (gzip) and frames (zstd) are valid bodies; 1024
	// of them make 1 GiB cheaply.
	gzMember, zstFrame := gzipped(zeros), zstded(zeros)
	zl := zlibbed(make([]byte, 64<<20)) // one stream of 64 MiB
	tests := []struct {
		encoding string
		body     []byte
	}{
		{"gzip", bytes.Repeat(gzMember, 1024)},
		{"zstd", bytes.Repeat(zstFrame, 1024)},
		{"deflate", zl},
		{"br", brotlied(make([]byte, 64<<20))},
		{"gzip, gzip", gzipped(bytes.Repeat(gzMember, 1024))},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.encoding, ", ", "+"), func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			got, err := sentry.Body(bodyRequest(tt.body, tt.encoding), sentry.Limits{Decompressed: limit})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, sentry.ErrTooLarge) {
				t.Fatalf("Body(%s bomb of %d bytes) = %d bytes, %v; want ErrTooLarge", tt.encoding, len(tt.body), len(got), err)
			}
			// Allocated: the output buffer (at most 2 MiB with doubling), the
			// decoder's window and tables, and the test's request.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 24<<20 {
				t.Errorf("Body allocated %d MiB for a %d MiB limit", alloc>>20, limit>>20)
			} else {
				t.Logf("%s: %d bytes in, %d KiB allocated", tt.encoding, len(tt.body), alloc>>10)
			}
		})
	}
}
