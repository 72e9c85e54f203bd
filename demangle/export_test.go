package demangle

// CxxPanics returns how many panics of the C++ demangler Demangle has
// recovered, for FuzzDemangle to report them.
func CxxPanics() int64 { return cxxPanics.Load() }

// FastItanium and SlowItanium are the two paths of the C++ demangler, for
// the test that compares them and for the benchmark. The fast path reports
// whether it took the name.
func FastItanium(name string, style Style) (string, bool) {
	if len(name) > maxItaniumInput {
		return "", false
	}
	return fastItanium(name, style)
}

func SlowItanium(name string, style Style) string {
	if len(name) > maxItaniumInput {
		return name
	}
	return slowItanium(name, style)
}
