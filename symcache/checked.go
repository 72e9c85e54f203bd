//go:build checked

package symcache

// checked makes load8 check its reads.
const checked = true
