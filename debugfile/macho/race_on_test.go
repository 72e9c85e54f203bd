//go:build race

package macho_test

// raceEnabled makes the exhaustive corruption tests sample instead, since
// the race detector slows them tenfold and they start no goroutines.
const raceEnabled = true
