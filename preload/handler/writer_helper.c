/* SPDX-License-Identifier: MIT */
/*
 * writer_helper.c - a transient writer's write (writer.c), made where the
 * program's fd table is never touched: by a helper, a vfork-like child
 * (CLONE_VM|CLONE_VFORK, no exit signal, every signal blocked) that shares
 * our memory but has a copy of our fd table of its own. When that table is
 * full (the program holds every number its limit allows), the helper closes
 * its copy of one of the program's fds, which releases nothing of the
 * program's (record locks are owned by the table, an open file by every fd
 * referring to it), opens the file on the number freed, writes, and exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "writer_parts.h"

struct helper {
	struct writer *w;
	write_op op;
	void *arg;
	int err;
};

/*
 * File systems whose files do nothing when one of several fds on them is
 * closed (no ->flush: a FUSE server, NFS or CIFS would see the helper's close).
 */
static const unsigned long quiet_fs[] = {
    0x50495045, /* pipefs */
    0x534f434b, /* sockfs */
    0x09041934, /* anon_inodefs (eventfd, epoll, signalfd, timerfd, perf) */
    0x01021994, /* tmpfs, devtmpfs */
    0x00001cd1, /* devpts */
    0x0000ef53, /* ext2/3/4 */
    0x58465342, /* xfs */
    0x9123683e, /* btrfs */
    0x00009fa0, /* proc */
    0x62656572, /* sysfs */
};

/* In the helper: the highest number below the soft limit whose close no one sees, or -1. */
static int quiet_number(void)
{
	struct rlimit rl;
	struct statfs sf;

	if (raw_syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &rl) < 0)
		return -1;
	for (long fd = (long)(rl.rlim_cur < AP_FD_FLOOR ? rl.rlim_cur : AP_FD_FLOOR) - 1; fd >= 0;
	     fd--) {
		if (raw_syscall(SYS_fstatfs, fd, &sf) < 0)
			continue;
		for (size_t i = 0; i < sizeof(quiet_fs) / sizeof(quiet_fs[0]); i++)
			if ((unsigned long)sf.f_type == quiet_fs[i])
				return (int)fd;
	}
	return -1;
}

/*
 * The helper's body: free a number in its own copy of the fd table, open the
 * file on it (or make it: a deferred file, writer_file.c), run the write with it as w->fd (our
 * memory: the caller waits, holding the lock), and exit. Raw system calls only.
 */
static int helper_main(void *arg)
{
	struct helper *h = arg;
	int fd = h->w->making ? writer_fd__make(h->w) : writer_fd__open_again(h->w), spare;

	if (fd == -EMFILE && (spare = quiet_number()) >= 0) {
		raw_syscall(SYS_close, spare);
		fd = h->w->making ? writer_fd__make(h->w) : writer_fd__open_again(h->w);
	}
	if (fd < 0) {
		h->err = fd;
		return 0;
	}
	h->w->fd = fd;
	h->err = h->op(h->w, h->arg);
	h->w->fd = -1;
	return 0;
}

/*
 * Under the lock: run op in a helper process (see the top of the file), all
 * signals blocked in it, and reap it. Returns op's result, or -EMFILE when
 * no helper could write (said once: the write is dropped). Async-signal-safe (clone with
 * CLONE_VFORK is a system call; the caller waits for the helper's exit).
 */
int writer_helper__run(struct writer *w, write_op op, void *arg)
{
	struct helper h = {w, op, arg, -EMFILE};
	const size_t size = 64 << 10;
	int saved_errno = errno;
	sigset_t all, old;
	void *stack;
	long pid;

	stack = (void *)raw_syscall(SYS_mmap, NULL, size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (stack == MAP_FAILED)
		return -EMFILE;
	sigfillset(&all);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(long));
	/* No exit signal: the program's SIGCHLD and wait() never see it. */
	pid = clone(helper_main, (char *)stack + size, CLONE_VM | CLONE_VFORK, &h);
	raw_syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(long));
	if (pid > 0)
		raw_syscall(SYS_wait4, pid, NULL, __WCLONE, NULL);
	raw_syscall(SYS_munmap, stack, size);
	errno = saved_errno;
	if (h.err == -EMFILE) {
		static int said;
		static const char msg[] =
		    "autoprof: the program holds every file descriptor its "
		    "RLIMIT_NOFILE allows and the profile could not be "
		    "written: records are lost until one is free (said once)\n";

		log__say_once(&said, msg, sizeof(msg) - 1);
	}
	return h.err;
}
