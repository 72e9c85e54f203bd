//go:build !race

package dwarf_test

// raceSlowdown scales time limits under the race detector.
const raceSlowdown = 1
