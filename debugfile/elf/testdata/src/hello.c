// hello.c is compiled by the debugfile/elf tests (tools_test.go) for several
// targets, so it includes no headers.

int printf(const char *format, ...);

struct point {
	int x, y;
	const char *label;
};

int counter = 1;                      // STT_OBJECT, STB_GLOBAL, .data
static int hidden_counter;            // STT_OBJECT, STB_LOCAL, .bss
__thread int per_thread = 7;          // STT_TLS
const char greeting[] = "hello, elf"; // .rodata

__attribute__((weak)) int weak_hook(int v) { return v + 1; } // STB_WEAK

static int add(struct point *p) { return p->x + p->y + hidden_counter++; }

__attribute__((noinline)) int scale(int v, int by) {
	struct point p = {v, by, greeting};
	for (int i = 0; i < by; i++)
		v += add(&p);
	return v;
}

#if defined(__x86_64__)
static int impl(void) { return 42; }
static int (*resolve(void))(void) { return impl; }
int chosen(void) __attribute__((ifunc("resolve"))); // STT_GNU_IFUNC
#endif

int main(int argc, char **argv) {
	(void)argv;
	int v = scale(argc, 3) + weak_hook(counter) + per_thread;
#if defined(__x86_64__)
	v += chosen();
#endif
	printf("%s %d\n", greeting, v);
	return v == 0;
}
