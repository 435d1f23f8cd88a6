/* SPDX-License-Identifier: MIT */
/*
 * dupfd.c file|pipe|fdup - put the program's own descriptors on high
 * numbers (1000..1015, where a profiler likes to hide its own) and use them.
 *   file: dup2 a file onto 1000..1015 (and dup3, F_DUPFD), write through
 *         each while computing, close; the file must hold exactly our lines.
 *   pipe: dup2 a pipe's write end onto 1000..1015, close the original,
 *         write, close them all: the reading child must see EOF.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hot.h"

#define LO 1000
#define HI 1015

static void line(int fd, int i)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "line %d via fd %d\n", i, fd);

	if (write(fd, buf, n) != n)
		printf("short write on %d\n", fd);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "file";

	if (!strcmp(mode, "file")) {
		int fd = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);

		for (int i = LO; i <= HI; i++) {
			int r = i % 3 == 0 ? dup2(fd, i) : i % 3 == 1 ? dup3(fd, i, O_CLOEXEC) : i;

			if (i % 3 == 2) {
				close(i);
				r = fcntl(fd, F_DUPFD, i);
			}
			if (r != i)
				printf("dup to %d gave %d\n", i, r);
		}
		for (int round = 0; round < 20; round++) {
			hostile_hot(10000000UL);
			for (int i = LO; i <= HI; i++)
				line(i, round);
		}
		for (int i = LO; i <= HI; i++)
			close(i);
		close(fd);
		printf("file written\n");
		return 0;
	}
	int p[2];
	pid_t pid;

	if (pipe(p))
		return 1;
	pid = fork();
	if (pid == 0) {
		char buf[4096];
		long total = 0;
		ssize_t n;

		close(p[1]);
		while ((n = read(p[0], buf, sizeof(buf))) > 0)
			total += n;
		printf("reader saw EOF after %ld bytes\n", total);
		_exit(0);
	}
	close(p[0]);
	for (int i = LO; i <= HI; i++)
		if (dup2(p[1], i) != i)
			printf("dup2 to %d failed\n", i);
	close(p[1]);
	for (int round = 0; round < 20; round++) {
		hostile_hot(10000000UL);
		for (int i = LO; i <= HI; i++)
			line(i, round);
	}
	for (int i = LO; i <= HI; i++)
		close(i);
	int st;

	waitpid(pid, &st, 0);
	printf("writer done, reader status %d\n", st);
	return 0;
}
