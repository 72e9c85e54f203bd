package backtrail_test

import (
	"bytes"
	"regexp"
	"runtime/pprof"
	"strconv"
	"testing"
)

// goroutineLabel returns the value of label key on the calling goroutine,
// read back from the goroutine profile: the record that contains this very
// function and has the label.
func goroutineLabel(t *testing.T, key string) string {
	t.Helper()
	var buf bytes.Buffer
	pprof.Lookup("goroutine").WriteTo(&buf, 1)
	re := regexp.MustCompile(`# labels: \{.*` + regexp.QuoteMeta(strconv.Quote(key)) + `:("(?:[^"\\]|\\.)*")`)
	blocks := bytes.Split(buf.Bytes(), []byte("\n\n"))
	for _, b := range blocks {
		if !bytes.Contains(b, []byte("goroutineLabel")) {
			continue
		}
		if m := re.FindSubmatch(b); m != nil {
			v, _ := strconv.Unquote(string(m[1]))
			return v
		}
	}
	return ""
}
