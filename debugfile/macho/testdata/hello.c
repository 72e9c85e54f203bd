// Source of the hello-*.o objects and hello.fat; see README.md.

int counter = 3;
int buffer[16]; // zero-fill: __DATA,__bss

static int helper(int x) { return x * counter + buffer[x & 15]; }

int add(int a, int b) { return helper(a) + b; }

int main(void) { return add(1, 2); }
