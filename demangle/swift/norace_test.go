//go:build !race

package swift_test

const raceEnabled = false
