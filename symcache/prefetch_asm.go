//go:build amd64 || arm64

package symcache

// prefetch asks the processor to bring the cache line at addr into its
// caches without waiting for it: unlike a load, it neither stalls the
// instructions after it nor faults on an address outside the file. Go has
// no such statement; the call of an assembly function costs the register
// spills around it.
//
//go:noescape
func prefetch(addr uintptr)

// canPrefetch says that prefetch does something.
const canPrefetch = true
