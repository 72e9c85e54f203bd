int g(int);
__attribute__((noinline)) int f(int n) { volatile int a[64]; for (int i=0;i<n;i++) a[i&63]=g(i); return a[3]; }
__attribute__((noinline)) int g(int n) { volatile int big[5000]; big[n]=n; return big[n/2]; }
void _start(void) { f(3); for(;;); }
