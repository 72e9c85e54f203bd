//go:build !race

package macho_test

const raceEnabled = false
