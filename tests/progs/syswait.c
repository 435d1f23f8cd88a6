/*
 * syswait.c - a thread that spends its time in the kernel (large reads from
 * /dev/zero) between short waits that a signal would cut short (epoll_wait,
 * nanosleep, poll: never restarted after a handler). Prints how many waits
 * ended with EINTR: 0 when nothing delivered a signal to it.
 * Usage: syswait SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	double end = now() + (argc > 1 ? atof(argv[1]) : 2.0);
	int zero = open("/dev/zero", O_RDONLY), ep = epoll_create1(0);
	long waits = 0, eintr = 0;

	while (now() < end) {
		struct epoll_event ev;
		struct timespec ts = {0, 200000};

		for (int i = 0; i < 8; i++)
			if (read(zero, buf, sizeof(buf)) < 0)
				return 1;
		eintr += epoll_wait(ep, &ev, 1, 1) < 0 && errno == EINTR;
		eintr += nanosleep(&ts, NULL) < 0 && errno == EINTR;
		eintr += poll(NULL, 0, 1) < 0 && errno == EINTR;
		waits += 3;
	}
	printf("waits %ld eintr %ld\n", waits > 0 ? 1L : 0L, eintr);
	return 0;
}
