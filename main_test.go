package backtrail_test

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/backtrail/backtrail"
)

// childEnv selects a child-process mode: the test binary re-runs itself to
// crash, be killed, or print its traceback in ways a test cannot survive.
const childEnv = "BACKTRAIL_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		runChild(mode, os.Getenv("BACKTRAIL_TEST_DIR"))
		fmt.Fprintln(os.Stderr, "child returned")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func runChild(mode, dir string) {
	if err := backtrail.Init(backtrail.Options{SpoolDir: dir}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(4)
	}
	switch mode {
	case "repanic":
		childSubmit()
		time.Sleep(10 * time.Second)
	case "fatal":
		var mu sync.Mutex
		childFatal(&mu)
	case "kill":
		// Write crash reports as fast as possible until killed.
		c, _ := backtrail.NewClient(backtrail.Options{SpoolDir: dir, RecoverPanics: true, SpoolMaxCount: 1 << 20, SpoolMaxBytes: 1 << 40})
		for i := 0; ; i++ {
			// With RecoverPanics the wrapped call returns once the panic
			// is recorded.
			c.Wrap(func() { panic(fmt.Sprintf("report %d", i)) })()
			fmt.Println(i) // the report for panic i is spooled
		}
	}
}

//go:noinline
func childSubmit() {
	backtrail.Go(func() { panic("boom") })
}

//go:noinline
func childFatal(mu *sync.Mutex) {
	mu.Unlock() // fatal error: sync: unlock of unlocked mutex
}
