/* SPDX-License-Identifier: MIT */
/*
 * fds.c MODE - programs that look at or clear their descriptors:
 *   list        prints /proc/self/fd (numbers and targets) and the count of
 *               fds 0..4095 that fcntl(F_GETFD) accepts, from the main
 *               thread and after threads started.
 *   closerange  close_range(3, ~0U, 0), then computes and writes a file
 *               that must land on fd 3.
 *   closeloop   closes 3..65535 one by one with the raw syscall, same checks.
 *   closefrom   closefrom(3), same checks.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hot.h"

static void list(const char *when)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	printf("%s: /proc/self/fd:", when);
	while ((e = readdir(d))) {
		char path[300], target[256];
		ssize_t len;

		if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, target, sizeof(target) - 1);
		target[len > 0 ? len : 0] = 0;
		if (strncmp(target, "/dev/pts", 8) && strncmp(target, "pipe:", 5) &&
		    strncmp(target, "/tmp/", 5))
			printf(" %s->%s", e->d_name, target);
		else
			printf(" %s", e->d_name);
	}
	closedir(d);
	for (int fd = 0; fd < 4096; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	printf("; fcntl count %d\n", n);
}

static void *worker(void *arg)
{
	(void)arg;
	hostile_hot(100000000UL);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "list";
	int fd;

	if (!strcmp(mode, "list")) {
		pthread_t t[3];

		list("start");
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, worker, NULL);
		hostile_hot(50000000UL);
		list("threads");
		for (int i = 0; i < 3; i++)
			pthread_join(t[i], NULL);
		list("joined");
		return 0;
	}
	hostile_hot(50000000UL);
	if (!strcmp(mode, "closerange"))
		printf("close_range: %d\n", (int)syscall(SYS_close_range, 3, ~0U, 0));
	else if (!strcmp(mode, "closeloop"))
		for (int i = 3; i < 65536; i++)
			syscall(SYS_close, i);
	else if (!strcmp(mode, "closefrom"))
		closefrom(3);
	hostile_hot(150000000UL);
	fd = open("written.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	printf("new file on fd %d\n", fd);
	for (int i = 0; i < 10; i++) {
		hostile_hot(10000000UL);
		dprintf(fd, "line %d\n", i);
	}
	close(fd);
	return 0;
}
