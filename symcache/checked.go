//go:build checked

package symcache

// checked makes load8 and File.str check their reads.
const checked = true
