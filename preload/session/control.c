/* SPDX-License-Identifier: MIT */
/*
 * control.c - `autoprof ctl PID start|stop|dump|status`: control of a
 * running process, through the sampling signal the library already holds.
 *
 * At start the library writes its control endpoint, DIR/PID (DIR is
 * $XDG_RUNTIME_DIR/autoprof, else /tmp/autoprof-UID; both mode 0700, the file
 * 0600): the process's start time (to tell a reused pid), the sampling signal,
 * a random token and the profile's path. `autoprof ctl` reads it and queues
 * the sampling signal with si_code SI_QUEUE and the value
 * token << 32 | nonce << 8 | command. Our handler (on_signal.c) takes such a
 * delivery as a request, never as a sample or the program's signal, acts on
 * it at once from the thread it landed on, and writes its answer to
 * DIR/PID.reply (through a temporary file and a rename), which ctl reads:
 * that side, which runs in the handler, is handler/control_request.c.
 *
 * No new signal, fd or thread is visible to the program: the signal number
 * is the one the library holds anyway (a program that takes it moves
 * sampling, and the endpoint, to another number; with a Go runtime our
 * handler is chained and sees the request first), and the answer's fd lives
 * inside the handler only.
 *
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "autoprof/control.h"
#include "internal.h"

/* The endpoint of this image, set up before any request can come. */
static char endpoint[PATH_MAX]; /* its token and reply file: handler/control_request.c */

/*
 * The folder of the endpoints: made 0700 when missing; it must be ours, a
 * real folder, and closed to others. Checked once per image and user (the
 * machine's description and the endpoint both ask at start: a mkdir and an
 * lstat fewer), again when $XDG_RUNTIME_DIR or the user changes. Returns 0
 * or -errno. Not async-signal-safe.
 */
int control__dir(char *out, size_t cap)
{
	static char checked[PATH_MAX];
	static uid_t checked_uid;
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char want[PATH_MAX];
	uid_t uid = getuid();
	int err;

	if (checked[0] && uid == checked_uid && !ap_control_dir(want, sizeof(want), xdg, uid) &&
	    !strcmp(want, checked))
		return (size_t)snprintf(out, cap, "%s", checked) < cap ? 0 : -ENAMETOOLONG;
	err = ap_control_dir_make(out, cap, xdg);
	if (!err && strlen(out) < sizeof(checked)) {
		snprintf(checked, sizeof(checked), "%s", out);
		checked_uid = uid;
	}
	return err;
}

/* This process's start time in clock ticks since boot (/proc/self/stat field 22), or 0. */
static unsigned long long start_ticks(void)
{
	char buf[1024], *p;
	unsigned long long v = 0;

	if (raw_syscall__read_file("/proc/self/stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 &v) != 1)
		return 0;
	return v;
}

/*
 * Remove the endpoints in dir of processes that are gone (killed by SIGKILL,
 * or ended by a raw exit_group): the first process of each run does it.
 * Not async-signal-safe.
 */
static void sweep(const char *dir)
{
	char path[PATH_MAX + 300];
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (pid <= 0 || end == e->d_name || (*end && strcmp(end, ".reply")) ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
}

/*
 * Write this image's endpoint (control__publish(), one thread at a time).
 * Said once when it cannot be written; the profile goes on, without
 * control. Not async-signal-safe.
 */
static void publish(void)
{
	static pid_t published;
	static int image;
	static bool swept;
	char dir[PATH_MAX], tmp[PATH_MAX + 16], text[PATH_MAX + 256];
	uint32_t tok = 0;
	int fd, n, err;
	pid_t pid = getpid();

	if (published == pid && image == autoprof.gen)
		tok = control_request__token(); /* 0 if withdrawn */
	published = pid;
	image = autoprof.gen;
	if (!tok) /* a new token: none is valid until the file names it. A republish
		   * (sampling moved) keeps the token valid throughout: a request that
		   * read the old file must not reach the program as its signal. */
		control_request__set_token(0);
	err = control__dir(dir, sizeof(dir));
	if (!err && (size_t)snprintf(endpoint, sizeof(endpoint), "%s/%d", dir, (int)pid) >=
			sizeof(endpoint))
		err = -ENAMETOOLONG;
	if (err) {
		pr_warn("no control endpoint (%s: %s); `autoprof ctl` cannot reach this process",
			dir, strerror(-err));
		endpoint[0] = 0;
		return;
	}
	/* once per process, at its start: a failed exec republishes, maybe from a signal
	 * handler that interrupted malloc, and opendir takes libc's heap */
	if (autoprof.top && autoprof.gen == 0 && !tok && !swept) {
		swept = true;
		sweep(dir);
	}
	control_request__set_reply(endpoint);
	snprintf(tmp, sizeof(tmp), "%s.tmp", endpoint);
	while (!tok)
		if (raw_syscall(SYS_getrandom, &tok, sizeof(tok), 0) != sizeof(tok))
			tok = (uint32_t)(ap_now() ^ ((uint64_t)pid << 16));
	n = snprintf(text, sizeof(text), "%s\npid %d\nstart %llu\nsignal %d\ntoken %u\nfile %s\n",
		     AP_CONTROL_MAGIC, (int)pid, start_ticks(), autoprof.signo, tok,
		     autoprof.writer.path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) { /* left by a process of this pid that died here */
		unlink(tmp);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0 || write(fd, text, (size_t)n) != n || close(fd) < 0 || rename(tmp, endpoint)) {
		pr_warn("no control endpoint (%s: %s); `autoprof ctl` cannot reach this process",
			endpoint, strerror(errno));
		if (fd >= 0)
			unlink(tmp);
		endpoint[0] = 0;
		return;
	}
	control_request__set_token(tok);
}

/*
 * Write this image's endpoint: at start (a forked child or an exec'd image
 * gets a token of its own), and again when sampling moves to another
 * signal (the same token). One thread writes at a time: two at once (a
 * thread whose exec failed, another moving sampling) removed each other's
 * temporary file, and the endpoint was lost, said on stderr (3 runs in 300
 * of execfam sigflip under load). A call while another publishes (another
 * thread, or the code its handler interrupted) has the holder write once
 * more, with what is then current. The holder is a pid: a fork inherits a
 * parent's hold, which is no one's in the child. Not async-signal-safe.
 */
void control__publish(void)
{
	static pid_t publisher;
	static int again;
	pid_t self = getpid();
	int cancel;

	__atomic_store_n(&again, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		pid_t cur = __atomic_load_n(&publisher, __ATOMIC_SEQ_CST);

		if (!__atomic_load_n(&again, __ATOMIC_SEQ_CST) || cur == self)
			return; /* done, or the holder writes again */
		if (!__atomic_compare_exchange_n(&publisher, &cur, self, false, __ATOMIC_SEQ_CST,
						 __ATOMIC_SEQ_CST))
			continue;
		/* a holder cancelled in publish()'s open or write would hold for good */
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
		while (__atomic_exchange_n(&again, 0, __ATOMIC_SEQ_CST))
			publish();
		__atomic_store_n(&publisher, 0, __ATOMIC_SEQ_CST);
		pthread_setcancelstate(cancel, NULL);
	}
}

/* Remove this image's endpoint (the process ends or execs). Async-signal-safe. */
void control__withdraw(void)
{
	if (!control_request__take_token() || !endpoint[0])
		return;
	raw_syscall(SYS_unlink, endpoint);
	if (control_request__replied()) /* else no request was answered: no reply file */
		raw_syscall(SYS_unlink, control_request__reply());
}
