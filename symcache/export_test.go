package symcache

// LookupBatchPrefetching is LookupBatch prefetching for every chunk, as it
// does only for big symcaches, so that tests of small ones run that path.
func (f *File) LookupBatchPrefetching(b *Batch, addrs []uint64) {
	f.lookupBatch(b, addrs, func([]uint64) bool { return true })
}
