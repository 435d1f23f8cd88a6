/*
 * syscalls.c - a program that spends most of its time in the kernel: 4 KiB
 * writes to /dev/null from do_writes(), for about half a second of CPU.
 */
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static double cpu_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

__attribute__((noinline)) void do_writes(int fd)
{
	char b[4096] = {0};

	for (int i = 0; i < 1000; i++)
		if (write(fd, b, sizeof(b)) < 0)
			break;
}

int main(void)
{
	int fd = open("/dev/null", O_WRONLY);
	double start = cpu_seconds();

	while (cpu_seconds() - start < 0.5)
		do_writes(fd);
	return 0;
}
