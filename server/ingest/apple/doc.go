// Package apple turns Apple crash and hang reports into backtrail reports
// (package report, format version 1.0, docs/report-format.md), for the
// server to symbolicate with dSYMs. It reads three formats, which Sniff
// tells apart:
//
//   - .ips files (ParseIPS): a one-line JSON header and a body, as described
//     in Apple's "Interpreting the JSON format of a crash report" (iOS 15
//     and macOS 12 and later; body version 2, and the array-shaped frames
//     and images of version 1), plus the text bodies of bug_type 109 and
//     the processByPid bodies of stackshots.
//   - Legacy text crash reports (ParseCrash), as described in Apple's
//     "Examining the fields in a crash report", in the layouts of Mac OS X
//     10.8 to macOS 11 and iOS 13: header fields, thread blocks, register
//     dumps and binary images.
//   - MetricKit JSON (ParseMetricKit): an MXDiagnosticPayload, one
//     diagnostic, or a bare MXCallStackTree, as their jsonRepresentation
//     methods write them (iOS 14 and later, macOS 12 and later).
//
// # Mapping
//
// Every report has Platform "native" and names its format in SDK.Name
// ("apple.ips", "apple.crash", "apple.metrickit") with the format's own
// version in SDK.Version (the .ips body version, the "Report Version"
// field, the diagnostic's version). Frames are innermost first.
//
//   - Modules come from the binary images (usedImages, "Binary Images:",
//     the binaries MetricKit frames name): Type "macho", Name, Path,
//     DebugID (the UUID, lower-case and hyphenated), CodeID (the UUID as 32
//     lower-case hex digits), ImageAddr (load address), ImageSize and Arch
//     (Apple's spelling: "arm64e", "x86_64h", because dSYM slices are
//     matched by it). Images without a name take the base of their path.
//   - Frame.Addr is the absolute address: the image's load address plus
//     imageOffset in .ips files, as printed in text reports, and MetricKit's
//     address. Frame.Module is the image name. Symbols the report already
//     carries are kept: "main + 20 (main.cpp:12)" gives Function "main",
//     File "main.cpp" and Line 12, .ips symbol, sourceFile and sourceLine
//     likewise, and inline .ips frames are marked Inlined. "???" names are
//     dropped; a frame with neither an address nor a name gets Function
//     "???" so that it still satisfies §4.
//   - Threads: ID is the thread id of .ips files, the thread number of text
//     reports, the callStacks index of MetricKit. Name is the thread's name,
//     or else its dispatch queue, which Labels["dispatch_queue"] also holds.
//     The crashed thread (faultingThread or triggered, "Thread N Crashed:"
//     or the Crashed Thread field, threadAttributed) has Crashed set and,
//     when the report has them, Registers: lower-case names ("x0", "fp",
//     "pc", "rip", "rflags", "far", "esr") to values. "Last Exception
//     Backtrace" and "Application Specific Backtrace" become extra threads
//     of that name, numbered after the last thread.
//   - Exception: Type is the Mach exception (EXC_BAD_ACCESS), or the signal
//     when the report gives only a signal (SIGSEGV); Value is the signal,
//     a colon and the subtype or codes, then "; " and any exception message:
//     "SIGSEGV: KERN_INVALID_ADDRESS at 0x0000000000000000". Mechanism is
//     "mach" for a Mach exception and "signal" for a bare signal. MetricKit's
//     numeric exceptionType and signal are named after xnu's headers (see
//     const.go), its exceptionCode is printed as 0x%016x and an Objective-C
//     exceptionReason becomes the message.
//   - Kind: crash for crash reports; hang for stackshots, MetricKit hang
//     and app launch diagnostics; dump for MetricKit CPU and disk write
//     exception diagnostics and bare call stack trees, which are sampled
//     like a spindump. Hang and dump reports from MetricKit keep every
//     sampled path, with its sample count as Weight, in Hang.Samples.
//   - EventID is the report's incident identifier as 32 hex digits. Reports
//     without one (older text reports, MetricKit) get the first 16 bytes of
//     a SHA-256 over their content, marked as a version 8 UUID, so that
//     uploading the same file again gives the same id.
//   - Timestamp is the capture time (.ips captureTime, else the header's
//     timestamp; Date/Time; the payload's timeStampEnd) in UTC. It is zero
//     when the report has none, as a bare MXCallStackTree; the caller then
//     sets the time of receipt, as report.Validate requires a time.
//   - Release is "bundle@short+build" from the bundle identifier,
//     CFBundleShortVersionString and CFBundleVersion, leaving out what is
//     missing. The text reports' "Version: 1.0 (42)" puts the two versions
//     in either order depending on the platform; the one with a dot is
//     taken as the short version.
//   - OS is the name in GOOS spelling ("darwin" for macOS and Mac OS X,
//     "ios" for iPhone OS and iOS, else the lower-case name such as "tvos")
//     and the version; Arch is the CPU type in GOARCH spelling.
//   - Tags hold what the format has no field for: apple.os_build,
//     apple.model (hardware model), apple.process, apple.bug_type,
//     apple.termination, apple.asi (Application Specific Information),
//     apple.version (the text Version field), apple.translated (Rosetta),
//     apple.metrickit (the diagnostic's kind), apple.vm_region,
//     apple.cpu_time, apple.sampled_time, apple.writes_caused and
//     apple.samples_truncated. Values are cut to 4 KiB.
//
// # Untrusted input
//
// Reports are uploaded by anyone holding a project key, so the parsers are
// built for hostile input. They never panic and do not recover from
// panics; work and memory are linear in the input, except that MetricKit
// paths, which a small tree can make numerous, are bounded separately.
// The limits are MaxThreads threads, MaxFrames frames per thread,
// MaxModules modules, MaxRegisters registers per thread, MaxDepth levels
// of MetricKit subFrames (deeper frames are cut and the path marked
// truncated; encoding/json itself refuses nesting beyond 10000 levels),
// and MaxSamples samples of at most MaxSampleFrames frames in all per
// report and four times that per ParseMetricKit call. Threads, modules,
// frames and samples that a limit cuts are marked as truncated. Text that is not UTF-8
// is repaired, so every string survives report.Encode. Every error wraps
// ErrInvalid or ErrUnsupported and names the line of a text report or the
// JSON field or line it is about.
//
// Fuzz targets for the three parsers check these properties on arbitrary
// input, seeded from the fixtures in testdata/apple at the repository
// root: no panic, errors that wrap a sentinel, the limits, and that every
// accepted report survives report.Encode and report.Decode unchanged.
//
// The functions are safe for concurrent use.
package apple
