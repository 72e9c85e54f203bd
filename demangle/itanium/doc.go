// Package itanium is a fast demangler for the common names of the Itanium
// C++ ABI (https://itanium-cxx-abi.github.io/cxx-abi/abi.html#mangling,
// section 5.1), written for package demangle, which it serves as a fast
// path.
//
// It reads a name in one recursive-descent pass into a compact arena of
// nodes (indexes, not pointers; the substitution and template parameter
// tables are slices of indexes), then prints the arena once into a byte
// slice. A Demangler keeps its arena and buffers between calls, so that a
// reused Demangler does not allocate.
//
// It covers what real symbols are made of: nested, local and unscoped
// names, templates and their arguments (types, argument packs, integer
// and bool literals), substitutions and the standard abbreviations,
// template parameters (with the forward references of conversion
// operators), function, pointer, reference, pointer-to-member and array
// types, cv and ref qualifiers, builtin types, operators, constructors
// and destructors (inheriting ones too), ABI tags, lambdas and unnamed
// types, pack expansions, clone suffixes, Clang's block invocation
// functions, and the special names for vtables, VTTs, typeinfo, guard
// variables, thread-local routines, thunks and (in the GNU styles) GCC's
// transaction clones. For anything else
// (expressions, decltype, vendor qualifiers, vector types, and the rarer
// special names) it declines: Demangle reports false, and package
// demangle falls back to its complete demangler.
//
// Each Style writes what package demangle's style of the same name writes,
// quirks included: LLVM is llvm-cxxfilt-14 (" (.isra.0)", "'lambda'()",
// "std::string", the empty name of a constructor of a class with an ABI
// tag), Full is GNU c++filt with its verbose standard names
// ("std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
// " [clone .isra.0]", "{lambda()#1}", no return type for the function of a
// local name, no space in "A<B<int>>" before an empty pack), and Short is
// the qualified name alone, as the GNU style writes it without the verbose
// names. Package demangle's tests check that wherever this package
// accepts a name, it writes what the complete demangler writes.
//
// # Untrusted input
//
// Demangle never panics. Its recursion depth, its arena and its output are
// bounded (MaxDepth, MaxNodes, MaxOutput), and so is the work of printing,
// however often substitutions repeat a part of the tree; past a bound it
// declines. FuzzDemangle checks these guarantees.
package itanium
