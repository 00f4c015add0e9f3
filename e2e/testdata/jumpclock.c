/*
 * jumpclock.c: LD_PRELOAD library that adds a runtime-adjustable offset (ms)
 * to a process's wall clock (CLOCK_REALTIME*, gettimeofday, time). The offset
 * is the little-endian int64 at the start of the file JUMPCLOCK_FILE, mmapped
 * shared, so a test steps a redis-server's clock forward or back while it runs
 * (an NTP step). Raw syscalls only: it never allocates.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *off;

__attribute__((constructor)) static void jumpclock_init(void) {
	const char *p = getenv("JUMPCLOCK_FILE");
	if (p == NULL)
		return;
	long fd = syscall(SYS_openat, AT_FDCWD, p, O_RDONLY);
	if (fd < 0)
		return;
	void *m = (void *)syscall(SYS_mmap, 0, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED)
		off = (volatile int64_t *)m;
}

static void shift(struct timespec *ts) {
	if (off == NULL)
		return;
	int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + *off * 1000000LL;
	ts->tv_sec = ns / 1000000000LL;
	ts->tv_nsec = ns % 1000000000LL;
}

int clock_gettime(clockid_t id, struct timespec *ts) {
	long r = syscall(SYS_clock_gettime, id, ts);
	if (r != 0)
		return (int)r;
	if (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)
		shift(ts);
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
