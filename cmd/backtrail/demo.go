package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/backtrail/backtrail/debugfile"
)

// demoDebugFiles and demoReports are the repository's test data that
// `serve --demo` loads: real dSYMs and Linux debug files, real Sentry
// events from CrashProbe, Apple crash reports, Go panics and SDK reports.
var demoDebugFiles = []string{
	"testdata/sentry-symbolic/macos/crash.dSYM",
	"testdata/sentry-symbolic/linux/crash.debug",
	"testdata/crashprobe/arm64-debug/dSYMs/arm64-CrashProbeiOS.app.dSYM",
	"testdata/crashprobe/arm64-debug/dSYMs/arm64-CrashLibiOS.framework.dSYM",
}

var demoReports = []string{
	"testdata/apple/multithread-test.ips",
	"testdata/apple/legacy/bruno.txt",
	"testdata/apple/legacy/XCDYouTubeKit-54.txt",
	"testdata/apple/metrickit/tree-real.json",
	"report/testdata/traceback/panic.txt",
	"report/testdata/traceback/system.txt",
	"report/testdata/crash.json",
	"report/testdata/hang.json",
	"report/testdata/audit.json",
	"report/testdata/dump.json",
}

// loadDemo uploads the demo data to the server at base through its public
// API, as a user's tools would.
func loadDemo(ctx context.Context, base, key, token string) error {
	if _, err := os.Stat("testdata"); err != nil {
		return fmt.Errorf("demo data: run from the repository root (%v)", err)
	}
	for _, p := range demoDebugFiles {
		f, err := debugfile.Open(p)
		if err != nil {
			return err
		}
		path := f.Path
		f.Close()
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, err := postDebugFile(ctx, base, token, "default", filepath.Base(path), body, func(int64) {}); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	events, _ := filepath.Glob("testdata/crashprobe/arm64-debug/*.json")
	for _, p := range events {
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/1/store/", bytes.NewReader(body))
		req.Header.Set("X-Sentry-Auth", "Sentry sentry_version=7, sentry_client=backtrail-demo/1.0, sentry_key="+key)
		req.Header.Set("Content-Type", "application/json")
		if err := send(req); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	for _, p := range demoReports {
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/api/v1/reports", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		if err := send(req); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

func send(req *http.Request) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %s", req.Method, strings.TrimPrefix(req.URL.Path, "/"), resp.Status)
	}
	return nil
}
