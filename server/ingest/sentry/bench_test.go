package sentry_test

import (
	"os"
	"testing"

	"github.com/backtrail/backtrail/server/ingest/sentry"
)

// BenchmarkEvent converts a CrashProbe event: 130 kB, 11 threads, 328
// modules.
func BenchmarkEvent(b *testing.B) {
	data, err := os.ReadFile(crashProbeFiles(b)[0])
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sentry.Event(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseEnvelope splits the envelope sentry-go sent for a panic.
func BenchmarkParseEnvelope(b *testing.B) {
	data, err := os.ReadFile("testdata/envelopes/sentry-go-threads.envelope")
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sentry.ParseEnvelope(data, sentry.Limits{}); err != nil {
			b.Fatal(err)
		}
	}
}
