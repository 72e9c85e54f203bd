// Package backtrail is the Go SDK of backtrail: cheap stack capture, trails
// that follow work across goroutines, panic and fatal-error reports, a hang
// watchdog, an audit of sensitive calls, and durable delivery of reports in
// the format of docs/report-format.md (version 1.0, package report).
//
// # Stacks
//
// Callers captures the current goroutine's return addresses by walking
// frame pointers (amd64 and arm64; runtime.Callers elsewhere or when the
// chain cannot be trusted) into a Stack value, without allocating.
// Stack.Frames symbolizes once per unique stack and caches the result.
//
// # Trails
//
// Go tells you only which goroutine created another. Work handed off
// through Go, AfterFunc, Wrap or a Group carries the stack that submitted
// it and that submitter's own trail, so Trail inside the work returns every
// hand-off that led to it, innermost first. The trail is also the pprof
// label LabelKey of the goroutine running the work, so goroutine profiles
// and Go 1.26 tracebacks with GODEBUG=tracebacklabels=1 show it.
//
// # Reports
//
// A panic in handed-off work is written to the spool, with its trail, and
// then continues as it would have (Options.RecoverPanics changes that).
// Fatal errors that recover cannot see are captured with
// runtime/debug.SetCrashOutput and reported on the next start. A Watchdog
// reports loop iterations and HTTP requests that run past a threshold, with
// stacks sampled during the hang. Audit counts sensitive calls per calling
// stack. Reports wait in a spool directory, one file each, until the
// uploader delivers them; kill -9 loses at most the one being written.
//
// # Clients
//
// The package-level functions use a default client, which Init replaces; a
// program that needs two clients uses NewClient. Zero Options are valid:
// nothing is sent, reports stay in memory, and every call is safe.
//
// # Cost
//
// Capture, hand-offs and audits take no locks on their hot paths and
// allocate only when they meet a stack or trail for the first time: stacks,
// trails and audit counters are interned in fixed-size lock-free tables
// (4096 entries each), which also bound the SDK's memory. BENCHMARKS.md has
// the figures.
package backtrail
