package api_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/backtrail/backtrail/internal/servertest"
	"github.com/backtrail/backtrail/internal/testenv"
)

// TestUpstreamDebuginfod runs two servers: one holds a debug file, the
// other has it as upstream debuginfod server. An event symbolicated on the
// second fetches the file from the first; the second then serves it to
// debuginfod clients itself; a build id nobody has is answered 404.
func TestUpstreamDebuginfod(t *testing.T) {
	t.Parallel()
	testenv.Tool(t, "llvm-symbolizer-14")
	c := newNativeCrash(t)
	b, codeID, load, addrs, want := c.bin, c.codeID, c.load, c.addrs, c.want

	origin := servertest.Start(t, servertest.Options{})
	origin.UploadDebugFile(t, nil, b.Debug)
	srv := servertest.Start(t, servertest.Options{Upstream: []string{origin.URL + "/debuginfod/" + origin.Project.Key}})

	id := eventID(7)
	if resp := srv.StoreEvent(t, nil, nativeEvent(id, b.Path, load, addrs, codeID, "")); resp.Status != 200 {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	srv.Wait(t)
	err := servertest.Poll(30*time.Second, func() error {
		ev := srv.Event(t, id)
		phys := physicalFrames(crashedThread(t, &ev.Report).Frames)
		if len(phys) != len(addrs) || phys[0][0].File == "" {
			return fmt.Errorf("not symbolicated yet")
		}
		for i, got := range phys {
			if !sameFrames(got, want[i]) {
				return fmt.Errorf("frame %d: server %s, llvm %v", i, framesString(got), want[i])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The fetched file is now the second server's own.
	resp := srv.Do(t, srv.Request(t, "GET", "/debuginfod/"+srv.Project.Key+"/buildid/"+codeID+"/debuginfo", nil))
	if resp.Status != 200 {
		t.Fatalf("debuginfod on the second server: %d", resp.Status)
	}
	have, err := os.ReadFile(b.Debug)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != string(have) {
		t.Errorf("served %d bytes, the debug file has %d", len(resp.Body), len(have))
	}
	// A build id neither server has.
	missing := "0123456789abcdef0123456789abcdef01234567"
	for range 2 {
		resp = srv.Do(t, srv.Request(t, "GET", "/debuginfod/"+srv.Project.Key+"/buildid/"+missing+"/debuginfo", nil))
		if resp.Status != 404 {
			t.Fatalf("unknown build id: %d", resp.Status)
		}
	}
}
