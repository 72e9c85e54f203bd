// Package sentry reads what unmodified Sentry SDKs send (sentry-go,
// @sentry/node, sentry-cocoa and the others) and turns their events into
// backtrail reports (docs/report-format.md, version 1.0, package report).
// It is the protocol layer under the HTTP handlers of server/api, which call
// it in this order:
//
//   - Auth finds the project's public key in the X-Sentry-Auth header, the
//     Authorization header or the sentry_key query parameter; KeyFromDSN
//     reads it from the "dsn" header of an envelope sent through a tunnel.
//   - Body reads the request body, undoing its Content-Encoding (gzip,
//     deflate, zstd, br) within Limits.
//   - ParseEnvelope splits a body sent to /api/<project>/envelope/ into its
//     items; Envelope.Event converts its event item. Store converts a body
//     sent to the older /api/<project>/store/ endpoint. Event converts one
//     event payload.
//   - RateLimitHeaders writes the headers of a 429 answer.
//
// The formats are Sentry's, as documented for SDK developers at
// https://develop.sentry.dev/sdk/: "Envelopes" (data-model/envelopes),
// "Event Payloads" and its interfaces (exception, threads, stacktrace,
// debug_meta, contexts, sdk), "Authentication" (overview, the X-Sentry-Auth
// header) and "Rate Limiting" (the X-Sentry-Rate-Limits header). Size limits
// follow the defaults of Sentry's ingestion service, Relay.
//
// # Conversion
//
// Event keeps what backtrail's report format can hold and drops the rest
// (breadcrumbs, request and user data, extra). Sentry lists frames
// outermost first; reports list them innermost first, so Event reverses
// them. The last value of exception.values is the exception the event is
// about (Sentry lists chained exceptions oldest first); its stack becomes the
// frames of the thread named by its thread_id, or of the crashed thread, or
// of a new crashed thread. An event without an exception (a message) becomes
// a report whose Exception has type "message" and the message as value.
// Fields without a place in the report (level, logger, transaction, dist,
// the device model, the OS name as sent, a message next to an exception)
// are kept in Tags. See Event for the details.
//
// # Untrusted input
//
// Every function here reads bytes from the network. They are bounded: Body
// reads at most Limits.Compressed bytes and produces at most
// Limits.Decompressed, stopping a decompression bomb as soon as it crosses
// the limit, without allocating what it would have produced; ParseEnvelope
// allocates nothing that a size read from the input asks for before checking
// it against the bytes that remain, and caps the number of items; Event
// keeps at most 250 frames per stack, 1000 threads and 4096 modules. They are
// linear in the size of their input. They never panic: FuzzParseEnvelope and
// FuzzEvent check that, and that every report Event returns survives
// report.Encode and report.Decode. Malformed input yields an error wrapping
// ErrInvalid (envelopes and events), ErrBadBody (compressed data) or
// ErrTooLarge (limits); data that is well formed but not understood, such as
// an unknown item type or an unknown field, is kept or ignored, never an
// error.
//
// The package keeps no state; everything in it is safe for concurrent use.
package sentry

import "errors"

// Sentinel errors, for errors.Is.
var (
	// ErrInvalid marks an envelope, event, DSN or header that breaks the
	// protocol. HTTP handlers answer it with 400 Bad Request.
	ErrInvalid = errors.New("sentry: invalid")
	// ErrBadBody marks a request body whose Content-Encoding cannot be
	// undone: corrupt or truncated compressed data, or an encoding this
	// package does not know. HTTP handlers answer it with 400 Bad Request.
	ErrBadBody = errors.New("sentry: bad request body")
	// ErrTooLarge marks input over one of the Limits. HTTP handlers answer
	// it with 413 Content Too Large.
	ErrTooLarge = errors.New("sentry: over the size limit")
	// ErrNoEvent is returned by Envelope.Event for an envelope without an
	// event item, such as one that carries only sessions or client
	// reports. It is not a failure: HTTP handlers answer 200.
	ErrNoEvent = errors.New("sentry: envelope has no event")
)
