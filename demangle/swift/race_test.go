//go:build race

package swift_test

// raceEnabled is set under the race detector, which makes sync.Pool drop
// entries at random, so allocation counts mean nothing there.
const raceEnabled = true
