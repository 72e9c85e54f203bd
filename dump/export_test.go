//go:build linux

package dump

// StackRange exposes stackRange: the part of a stack mapping a dump copies.
var StackRange = stackRange
