/* SPDX-License-Identifier: MIT */
/*
 * server.c - a signal-heavy server: an epoll loop serves 3 client threads
 * over socketpairs, takes SIGTERM and SIGHUP through a signalfd in the same
 * loop, reaps a worker child on SIGCHLD, ignores SIGPIPE, and uses EINTR-
 * sensitive calls (accept-style reads without SA_RESTART on SIGUSR1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hot.h"

#define CLIENTS 3
#define REQS	3000

static int client_fd[CLIENTS];

static void *client(void *arg)
{
	long i = (long)arg, bad = 0;
	int fd = client_fd[i];

	for (long n = 0; n < REQS; n++) {
		long r;

		if (write(fd, &n, sizeof(n)) != sizeof(n) || read(fd, &r, sizeof(r)) != sizeof(r) ||
		    r != n * n + i)
			bad++;
	}
	close(fd);
	return (void *)bad;
}

int main(void)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), sfd, srv[CLIENTS], open_clients = CLIENTS;
	long served = 0, bad = 0;
	pthread_t t[CLIENTS];
	struct epoll_event ev;
	sigset_t m;
	pid_t kid;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&m);
	sigaddset(&m, SIGTERM);
	sigaddset(&m, SIGHUP);
	sigaddset(&m, SIGCHLD);
	sigprocmask(SIG_BLOCK, &m, NULL);
	sfd = signalfd(-1, &m, SFD_CLOEXEC | SFD_NONBLOCK);
	ev = (struct epoll_event){.events = EPOLLIN, .data.fd = sfd};
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev);
	for (long i = 0; i < CLIENTS; i++) {
		int sp[2];

		socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp);
		srv[i] = sp[0];
		client_fd[i] = sp[1];
		ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = 1000 + i};
		epoll_ctl(ep, EPOLL_CTL_ADD, srv[i], &ev);
	}
	kid = fork();
	if (kid == 0) {
		hostile_hot(20000000UL);
		_exit(3);
	}
	for (long i = 0; i < CLIENTS; i++)
		pthread_create(&t[i], NULL, client, (void *)i);
	int got_chld = 0, got_hup = 0, got_term = 0;

	while (!got_term) {
		struct epoll_event evs[8];
		int n = epoll_wait(ep, evs, 8, 10000);

		if (n < 0 && errno == EINTR) {
			printf("epoll_wait EINTR\n");
			continue;
		}
		if (n == 0) {
			printf("epoll_wait timed out\n");
			break;
		}
		for (int k = 0; k < n; k++) {
			if (evs[k].data.fd == sfd && evs[k].data.u64 < 1000) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						int st;

						waitpid(kid, &st, 0);
						got_chld = WEXITSTATUS(st);
					} else if (si.ssi_signo == SIGHUP) {
						got_hup++;
					} else if (si.ssi_signo == SIGTERM) {
						got_term++;
					} else {
						printf("signalfd gave %u\n", si.ssi_signo);
					}
				}
				continue;
			}
			long i = (long)evs[k].data.u64 - 1000, v;
			ssize_t r = read(srv[i], &v, sizeof(v));

			if (r == 0) {
				epoll_ctl(ep, EPOLL_CTL_DEL, srv[i], NULL);
				close(srv[i]);
				if (--open_clients == 0) {
					kill(getpid(), SIGHUP);
					kill(getpid(), SIGTERM);
				}
				continue;
			}
			hostile_hot(20000UL);
			v = v * v + i;
			if (r != sizeof(v) || write(srv[i], &v, sizeof(v)) != sizeof(v))
				bad++;
			served++;
		}
	}
	if (!got_chld) {
		int st;

		waitpid(kid, &st, 0);
		got_chld = WEXITSTATUS(st);
	}
	for (int i = 0; i < CLIENTS; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad += (long)r;
	}
	printf("served %ld bad %ld child %d hup %d term %d\n", served, bad, got_chld, got_hup,
	       got_term);
	return 0;
}
