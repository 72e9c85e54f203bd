//go:build linux

package dump

// StackRange exposes stackRange: the part of a stack mapping a dump copies.
var StackRange = stackRange

// ParseStat exposes parseStat: the fields a dump reads from a stat file.
var ParseStat = parseStat
