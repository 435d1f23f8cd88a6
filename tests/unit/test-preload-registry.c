/* SPDX-License-Identifier: MIT */
/*
 * Unit test: the registry of sampled threads (preload/handler/registry.c)
 * through the handler layer alone: a thread attached from outside is found
 * by the fd its signals carry (its event's or its ramp's), on its own thread
 * only, and never on a thread in seccomp (ap_sandboxed, the per-thread flag
 * the session sets); a visitor takes each thread from its handler meanwhile
 * (its handler's buffer__enter fails until it is given back) and skips one
 * that stops; a thread is claimed to be stopped exactly once.
 */
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "handler/handler.h"
#include "handler/setup.h"
#include "tap.h"

static struct ap_thread a, b;

/* A visitor: counts the threads it sees, and whether each handler was held off meanwhile. */
struct seen {
	int n, held;
};

static void visit(struct ap_thread *t, void *arg)
{
	struct seen *s = arg;

	s->n++;
	s->held += !buffer__enter(t);
}

int main(void)
{
	struct seen s = {0, 0};

	plan(12);
	a.tid = gettid();
	a.fd = 40;
	a.ramp_fd = 41;
	b.tid = a.tid + 100000; /* another thread's */
	b.fd = 42;
	b.ramp_fd = -1;
	ok(registry__add(&a) == 0 && registry__add(&b) == 0, "two threads added");
	ok(registry__top() >= 1 && registry__at(a.slot) == &a && registry__at(b.slot) == &b,
	   "each in its slot");

	ok(registry__from_fd(40) == &a && registry__from_fd(41) == &a,
	   "the calling thread is found by its event's fd and its ramp's");
	ok(registry__from_fd(42) == NULL, "another thread's fd: not the caller's sampler");
	ok(registry__from_fd(7) == NULL, "an fd no thread has: none");
	ap_sandboxed = true;
	ok(registry__from_fd(40) == NULL, "a thread in seccomp makes no system call: none");
	ap_sandboxed = false;

	ok(registry__visit(visit, &s) == 2 && s.n == 2 && s.held == 2,
	   "a visitor sees both threads, each held off from its handler meanwhile");
	ok(buffer__enter(&a), "given back: the thread's handler enters again");
	buffer__leave(&a);

	ok(registry__claim(&b) && !registry__claim(&b), "a thread is claimed to stop once only");
	ok(!registry__grab(&b, false), "a thread that stops cannot be taken");
	s.n = s.held = 0;
	ok(registry__visit(visit, &s) == 1 && s.n == 1, "a visitor skips the stopped thread");
	registry__drop(&a);
	s.n = 0;
	ok(registry__visit(visit, &s) == 0 && registry__from_fd(40) == NULL,
	   "a dropped thread is gone from the registry");
	return tap_done();
}
