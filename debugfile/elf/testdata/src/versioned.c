// versioned.c is linked by the debugfile/elf tests (tools_test.go) into a
// shared library with versioned.map, for version definitions: foo@VERS_1
// (a hidden, non-default version) and foo@@VERS_2.

int foo_v1(int x) { return x + 1; }
int foo_v2(int x) { return x + 2; }
int bar(int x) { return foo_v2(x) * 2; }

__asm__(".symver foo_v1, foo@VERS_1");
__asm__(".symver foo_v2, foo@@VERS_2");
