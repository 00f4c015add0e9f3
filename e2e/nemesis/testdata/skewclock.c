/*
 * skewclock.c: an LD_PRELOAD library that runs a process's clocks at a rate
 * (SKEWCLOCK_RATE, e.g. "1.01": 1% fast), for the nemesis's clock-skew
 * fault. Debian's libfaketime cannot run redis-server (it recurses into
 * the jemalloc redis-server links: libfaketime issue #130); this one
 * never allocates: it reads the kernel's clocks by raw syscall and scales
 * the time elapsed since the library loaded.
 *
 * It interposes clock_gettime (REALTIME and the MONOTONIC family, which
 * Redis's ustime/mstime, monotonic clock and key expiry read), gettimeofday
 * and time. Built by the nemesis with gcc -shared -fPIC at run time.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static long double rate = 1.0L;
static struct timespec base_real, base_mono;

__attribute__((constructor)) static void skewclock_init(void) {
	const char *s = getenv("SKEWCLOCK_RATE");
	if (s != NULL) {
		long double r = strtold(s, NULL);
		if (r > 0.5L && r < 2.0L)
			rate = r;
	}
	syscall(SYS_clock_gettime, CLOCK_REALTIME, &base_real);
	syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &base_mono);
}

/* scale sets *ts to base + (ts - base) * rate. */
static void scale(struct timespec *ts, const struct timespec *base) {
	long double d = (long double)(ts->tv_sec - base->tv_sec) + (long double)(ts->tv_nsec - base->tv_nsec) / 1e9L;
	long double t = (long double)base->tv_sec + (long double)base->tv_nsec / 1e9L + d * rate;
	ts->tv_sec = (time_t)t;
	ts->tv_nsec = (long)((t - (long double)ts->tv_sec) * 1e9L);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	long r = syscall(SYS_clock_gettime, id, ts);
	if (r != 0)
		return (int)r;
	switch (id) {
	case CLOCK_REALTIME:
	case CLOCK_REALTIME_COARSE:
		scale(ts, &base_real);
		break;
	case CLOCK_MONOTONIC:
	case CLOCK_MONOTONIC_COARSE:
	case CLOCK_MONOTONIC_RAW:
	case CLOCK_BOOTTIME:
		scale(ts, &base_mono);
		break;
	}
	return 0;
}

int gettimeofday(struct timeval *tv, void *tz) {
	struct timespec ts;
	(void)tz;
	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *out) {
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (out != NULL)
		*out = ts.tv_sec;
	return ts.tv_sec;
}
