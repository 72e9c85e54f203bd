//go:build !amd64 && !arm64

package symcache

// prefetch does nothing where there is no assembly for it.
func prefetch(addr uintptr) {}

// canPrefetch says that prefetch does nothing: LookupBatch then waits for
// each read as Lookup does.
const canPrefetch = false
