// parked is the target program of backtrail dump's tests and benchmarks:
// threads parked at known call depths, plus optional threads that make a
// dump hard. It is C that also compiles as C++ (g++ -x c++), for mangled
// names.
//
//	parked [-t THREADS] [-d DEPTH] [-v] [-s] [-x] [-H USEC] [-R USEC]
//
//	-t N   worker threads (default 4)
//	-d N   call depth of each worker: N frames of level_a → level_b →
//	       level_c → level_d → level_a … above worker_main (default 5)
//	-v     vary the depth: worker i parks at DEPTH + i % 4
//	-s     add a thread that raises SIGUSR1 and blocks inside its handler,
//	       which runs on an alternate signal stack (sigaltstack), a mapping
//	       of its own: a walk goes from there to the thread's stack
//	-x     add a thread that keeps starting threads that exit at once
//	-H US  add a heartbeat thread that sleeps US microseconds per beat and
//	       records the longest gap beyond that (its worst pause)
//	-R US  add a real-time heartbeat (SCHED_FIFO; needs root or
//	       CAP_SYS_NICE): the same without most of the scheduler's delays
//
// The workers park in read(2) on a pipe, inside park_here, which is
// static inline and inlined into the level_* functions at -O2. Once all
// threads are parked the program prints "ready PID". It then reads
// commands on standard input, one per line:
//
//	ping     answer "pong"
//	hb       print "hb max_us=N wait_us=W away_us=A beats=M rt_max_us=…"
//	         (the same four for the real-time heartbeat) and reset them:
//	         the longest gap, its run delay, the longest gap less its run
//	         delay (see struct heartbeat); zeros for a heartbeat not asked for
//	release  wake every parked thread, join the workers, print "released N"
//	sigs     print "sigs N": how many SIGUSR2 the threads have handled
//	exit     exit 0
//
// Every thread handles SIGUSR2 by counting it (SA_RESTART: a parked
// thread goes back to its read).
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static int park_fd[2];
static volatile long sink;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int parked_count;

static void announce(void) {
	pthread_mutex_lock(&mu);
	parked_count++;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
}

// park_here blocks until "release". It is inlined into its callers at -O2.
static inline long park_here(int id) {
	char c;
	announce();
	long r = read(park_fd[0], &c, 1);
	sink += r;
	return r + id;
}

NOINLINE long level_a(int n, int id);
NOINLINE long level_b(int n, int id);
NOINLINE long level_c(int n, int id);
NOINLINE long level_d(int n, int id);

// Each level does work after the call so that it is not a tail call.
NOINLINE long level_a(int n, int id) {
	long r = n <= 0 ? park_here(id) : level_b(n - 1, id);
	sink += r;
	return r + 1;
}

NOINLINE long level_b(int n, int id) {
	long r = n <= 0 ? park_here(id) : level_c(n - 1, id);
	sink += r * 2;
	return r + 2;
}

NOINLINE long level_c(int n, int id) {
	long r = n <= 0 ? park_here(id) : level_d(n - 1, id);
	sink += r * 3;
	return r + 3;
}

NOINLINE long level_d(int n, int id) {
	long r = n <= 0 ? park_here(id) : level_a(n - 1, id);
	sink += r * 4;
	return r + 4;
}

struct worker {
	pthread_t th;
	int id;
	int depth;
};

NOINLINE static void *worker_main(void *arg) {
	struct worker *w = (struct worker *)arg;
	char name[16];
	snprintf(name, sizeof name, "worker-%d", w->id);
	pthread_setname_np(pthread_self(), name);
	sink += level_a(w->depth - 1, w->id);
	return NULL;
}

static long usr2_count;

static void on_usr2(int sig) {
	(void)sig;
	__atomic_fetch_add(&usr2_count, 1, __ATOMIC_RELAXED);
}

// The signal thread: raise SIGUSR1 and block inside the handler, on an
// alternate signal stack.
NOINLINE static void handler_park(void) {
	char c;
	announce();
	sink += read(park_fd[0], &c, 1);
}

static void on_usr1(int sig) {
	(void)sig;
	handler_park();
}

NOINLINE static void *signal_main(void *arg) {
	(void)arg;
	pthread_setname_np(pthread_self(), "in-handler");
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	stack_t alt;
	memset(&alt, 0, sizeof alt);
	alt.ss_size = 64 * 1024;
	alt.ss_sp = mmap(NULL, alt.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (alt.ss_sp == MAP_FAILED || sigaltstack(&alt, NULL) != 0) {
		perror("sigaltstack");
		exit(1);
	}
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGUSR1);
	return NULL;
}

// The churn thread: threads that start and exit all the time.
static volatile int churn_stop;

static void *short_main(void *arg) {
	(void)arg;
	struct timespec ts = {0, 100 * 1000};
	nanosleep(&ts, NULL);
	return NULL;
}

static void *churn_main(void *arg) {
	(void)arg;
	pthread_setname_np(pthread_self(), "churn");
	announce();
	while (!churn_stop) {
		pthread_t t;
		if (pthread_create(&t, NULL, short_main, NULL) == 0)
			pthread_join(t, NULL);
	}
	return NULL;
}

// A heartbeat sleeps a fixed interval in a loop and records the longest
// gap between beats beyond that sleep: the longest pause the thread saw.
// It also reads its own run delay (the time it spent runnable, waiting for
// a CPU: /proc/self/task/TID/schedstat, second field) at every beat, to
// tell "waiting for a CPU" from the rest of a gap (stopped by a tracer,
// or the timer's own latency).
//
// The normal heartbeat (-H) runs like any thread; on a shared machine its
// gaps are mostly the scheduler's. The real-time one (-R) measures the
// way cyclictest does: SCHED_FIFO priority 80, which preempts every
// normal thread the moment it is woken, and a timer slack of 1 ns; the
// program's memory is locked when it starts (mlockall). Its gaps are
// those of the tracer, and of the timer and the hypervisor.
struct heartbeat {
	const char *name;
	long interval_us;
	int realtime;
	pthread_t th;
	volatile long max_us;  // the longest gap beyond the sleep
	volatile long wait_us; // the run delay during that gap
	volatile long away_us; // the longest gap less its run delay
	volatile long beats;
};

static volatile int hb_stop;
static struct heartbeat hb_normal = {"heartbeat"}, hb_rt = {"heartbeat-rt", 0, 1};

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000;
}

// run_delay_us returns the calling thread's run delay from its schedstat
// file fd, or 0 if it cannot be read.
static long run_delay_us(int fd) {
	char buf[96];
	ssize_t n = fd < 0 ? -1 : pread(fd, buf, sizeof buf - 1, 0);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *p = strchr(buf, ' ');
	return p == NULL ? 0 : strtol(p + 1, NULL, 10) / 1000;
}

static void *heartbeat_main(void *arg) {
	struct heartbeat *h = (struct heartbeat *)arg;
	pthread_setname_np(pthread_self(), h->name);
	if (h->realtime) {
		struct sched_param sp = {.sched_priority = 80};
		int err = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
		if (err != 0) {
			fprintf(stderr, "parked: -R needs SCHED_FIFO (root or CAP_SYS_NICE): %s\n", strerror(err));
			exit(1);
		}
		prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", (long)syscall(SYS_gettid));
	int fd = open(path, O_RDONLY);
	announce();
	struct timespec ts = {h->interval_us / 1000000, (h->interval_us % 1000000) * 1000};
	long last = now_us(), last_wait = run_delay_us(fd);
	while (!hb_stop) {
		nanosleep(&ts, NULL);
		long t = now_us(), w = run_delay_us(fd);
		long gap = t - last - h->interval_us, wait = w - last_wait;
		if (gap > h->max_us) {
			h->max_us = gap;
			h->wait_us = wait;
		}
		if (gap - wait > h->away_us)
			h->away_us = gap - wait;
		h->beats++;
		last = t;
		last_wait = w;
	}
	return NULL;
}

// report prints a heartbeat's figures after prefix and resets them.
static void report(const char *prefix, struct heartbeat *h) {
	printf("%smax_us=%ld %swait_us=%ld %saway_us=%ld %sbeats=%ld", prefix, h->max_us, prefix, h->wait_us, prefix, h->away_us, prefix, h->beats);
	h->max_us = h->wait_us = h->away_us = 0;
}

// workers_reading waits (up to 5 s) until every worker and the signal
// thread block in read(2), as /proc/self/task/TID/syscall shows: a thread
// counts itself parked just before it reads, and "ready" must mean every
// stack is at its park site, not still leaving the lock of announce.
static void workers_reading(void) {
	struct timespec ms = {0, 1000000};
	for (int tries = 0; tries < 5000; tries++) {
		DIR *d = opendir("/proc/self/task");
		if (d == NULL)
			return;
		int busy = 0;
		struct dirent *e;
		while (!busy && (e = readdir(d)) != NULL) {
			char path[300], buf[64] = {0};
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
			FILE *f = fopen(path, "r");
			if (f == NULL)
				continue;
			int parks = fgets(buf, sizeof buf, f) != NULL &&
			            (strncmp(buf, "worker-", 7) == 0 || strncmp(buf, "in-handler", 10) == 0);
			fclose(f);
			if (!parks)
				continue;
			snprintf(path, sizeof path, "/proc/self/task/%s/syscall", e->d_name);
			f = fopen(path, "r");
			busy = f == NULL || fgets(buf, sizeof buf, f) == NULL || strncmp(buf, "0 ", 2) != 0;
			if (f != NULL)
				fclose(f);
		}
		closedir(d);
		if (!busy)
			return;
		nanosleep(&ms, NULL);
	}
}

int main(int argc, char **argv) {
	int nthreads = 4, depth = 5, vary = 0, sigthread = 0, churn = 0;
	int opt;
	while ((opt = getopt(argc, argv, "t:d:vsxH:R:")) != -1) {
		switch (opt) {
		case 't': nthreads = atoi(optarg); break;
		case 'd': depth = atoi(optarg); break;
		case 'v': vary = 1; break;
		case 's': sigthread = 1; break;
		case 'x': churn = 1; break;
		case 'H': hb_normal.interval_us = atol(optarg); break;
		case 'R': hb_rt.interval_us = atol(optarg); break;
		default:
			fprintf(stderr, "usage: parked [-t N] [-d N] [-v] [-s] [-x] [-H USEC] [-R USEC]\n");
			return 2;
		}
	}
	if (depth < 1)
		depth = 1;
	if (hb_rt.interval_us > 0 && mlockall(MCL_CURRENT | MCL_FUTURE) != 0)
		perror("mlockall");
	if (pipe(park_fd) != 0) {
		perror("pipe");
		return 1;
	}
	struct sigaction usr2;
	memset(&usr2, 0, sizeof usr2);
	usr2.sa_handler = on_usr2;
	usr2.sa_flags = SA_RESTART;
	sigemptyset(&usr2.sa_mask);
	sigaction(SIGUSR2, &usr2, NULL);
	// Only the signal thread takes SIGUSR1.
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	struct worker *ws = (struct worker *)calloc(nthreads, sizeof *ws);
	int want = 0;
	for (int i = 0; i < nthreads; i++) {
		ws[i].id = i;
		ws[i].depth = depth + (vary ? i % 4 : 0);
		if (pthread_create(&ws[i].th, &attr, worker_main, &ws[i]) != 0) {
			perror("pthread_create");
			return 1;
		}
		want++;
	}
	pthread_t sig_th, churn_th;
	if (sigthread) {
		pthread_create(&sig_th, NULL, signal_main, NULL);
		want++;
	}
	if (churn) {
		pthread_create(&churn_th, NULL, churn_main, NULL);
		want++;
	}
	if (hb_normal.interval_us > 0) {
		pthread_create(&hb_normal.th, NULL, heartbeat_main, &hb_normal);
		want++;
	}
	if (hb_rt.interval_us > 0) {
		pthread_create(&hb_rt.th, NULL, heartbeat_main, &hb_rt);
		want++;
	}
	pthread_mutex_lock(&mu);
	while (parked_count < want)
		pthread_cond_wait(&cv, &mu);
	pthread_mutex_unlock(&mu);
	workers_reading();
	printf("ready %d\n", (int)getpid());
	fflush(stdout);

	char line[64];
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "ping", 4) == 0) {
			printf("pong\n");
		} else if (strncmp(line, "hb", 2) == 0) {
			printf("hb ");
			report("", &hb_normal);
			printf(" ");
			report("rt_", &hb_rt);
			printf("\n");
		} else if (strncmp(line, "release", 7) == 0) {
			int n = nthreads + (sigthread ? 1 : 0);
			char *buf = (char *)calloc(n, 1);
			if (write(park_fd[1], buf, n) != n)
				perror("write");
			free(buf);
			for (int i = 0; i < nthreads; i++)
				pthread_join(ws[i].th, NULL);
			if (sigthread)
				pthread_join(sig_th, NULL);
			printf("released %d\n", n);
		} else if (strncmp(line, "sigs", 4) == 0) {
			printf("sigs %ld\n", __atomic_load_n(&usr2_count, __ATOMIC_RELAXED));
		} else if (strncmp(line, "exit", 4) == 0) {
			break;
		}
		fflush(stdout);
	}
	churn_stop = 1;
	hb_stop = 1;
	return 0;
}
