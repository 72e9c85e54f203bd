package demangle

// CxxPanics returns how many panics of the C++ demangler Demangle has
// recovered, for FuzzDemangle to report them.
func CxxPanics() int64 { return cxxPanics.Load() }
