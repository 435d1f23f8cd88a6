/* SPDX-License-Identifier: MIT */
/*
 * waits.c - the blocking calls of libc, for off-CPU time (AUTOPROF_OFFCPU):
 * each is the real call between offcpu__begin() and offcpu__end(), which
 * records the waits that began inside it at the real function's address (the
 * leaf: libc's pthread_mutex_lock, usleep, read ...) above the caller's stack
 * (session/offcpu.c). Without AUTOPROF_OFFCPU, or on a thread that has no
 * switch event, a wrapper is the real call and one load more. errno, the
 * return value and cancellation are the real call's (offcpu__end is no
 * cancellation point and keeps errno).
 *
 * The real functions are looked up when the library loads (a wrapper called
 * earlier, by another library's constructor, looks its own up): never in a
 * signal handler, where our unwinder calls pthread_mutex_lock.
 */
#include <dlfcn.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wrap.h"

/* glibc's checked versions (no header declares them). */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, struct sockaddr *a,
		       socklen_t *alen);
int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen);

/* One wrapper: ret name(params), calling the real one with args. */
#define WAIT_WRAPPER(ret, name, params, args)                                                      \
	static ret(*real_##name) params;                                                           \
	AP_API ret name params                                                                     \
	{                                                                                          \
		uint64_t since = offcpu__begin();                                                  \
		ret ap_ret_;                                                                       \
                                                                                                   \
		if (!real_##name)                                                                  \
			real_##name = (ret(*) params)dlsym(RTLD_NEXT, #name);                      \
		ap_ret_ = real_##name args;                                                        \
		if (since)                                                                         \
			offcpu__end(since, (const void *)real_##name);                             \
		return ap_ret_;                                                                    \
	}

/* clang-format off */
WAIT_WRAPPER(int, nanosleep, (const struct timespec *req, struct timespec *rem), (req, rem))
WAIT_WRAPPER(int, clock_nanosleep, (clockid_t c, int flags, const struct timespec *req,
				    struct timespec *rem), (c, flags, req, rem))
WAIT_WRAPPER(unsigned, sleep, (unsigned s), (s))
WAIT_WRAPPER(int, usleep, (useconds_t us), (us))
WAIT_WRAPPER(int, poll, (struct pollfd *fds, nfds_t n, int timeout), (fds, n, timeout))
WAIT_WRAPPER(int, ppoll, (struct pollfd *fds, nfds_t n, const struct timespec *ts,
			  const sigset_t *mask), (fds, n, ts, mask))
WAIT_WRAPPER(int, select, (int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *tv),
	     (n, r, w, e, tv))
WAIT_WRAPPER(int, pselect, (int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *ts,
			    const sigset_t *mask), (n, r, w, e, ts, mask))
WAIT_WRAPPER(int, epoll_wait, (int fd, struct epoll_event *ev, int max, int timeout),
	     (fd, ev, max, timeout))
WAIT_WRAPPER(int, epoll_pwait, (int fd, struct epoll_event *ev, int max, int timeout,
				const sigset_t *mask), (fd, ev, max, timeout, mask))
WAIT_WRAPPER(ssize_t, read, (int fd, void *buf, size_t len), (fd, buf, len))
WAIT_WRAPPER(ssize_t, recv, (int fd, void *buf, size_t len, int flags), (fd, buf, len, flags))
WAIT_WRAPPER(ssize_t, recvfrom, (int fd, void *buf, size_t len, int flags, struct sockaddr *a,
				 socklen_t *alen), (fd, buf, len, flags, a, alen))
WAIT_WRAPPER(ssize_t, recvmsg, (int fd, struct msghdr *m, int flags), (fd, m, flags))
WAIT_WRAPPER(int, accept, (int fd, struct sockaddr *a, socklen_t *alen), (fd, a, alen))
WAIT_WRAPPER(int, accept4, (int fd, struct sockaddr *a, socklen_t *alen, int flags),
	     (fd, a, alen, flags))
WAIT_WRAPPER(int, connect, (int fd, const struct sockaddr *a, socklen_t alen), (fd, a, alen))
WAIT_WRAPPER(int, pthread_cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
WAIT_WRAPPER(int, pthread_cond_timedwait, (pthread_cond_t *c, pthread_mutex_t *m,
					   const struct timespec *ts), (c, m, ts))
WAIT_WRAPPER(int, pthread_cond_clockwait, (pthread_cond_t *c, pthread_mutex_t *m, clockid_t id,
					   const struct timespec *ts), (c, m, id, ts))
WAIT_WRAPPER(int, pthread_mutex_lock, (pthread_mutex_t *m), (m))
WAIT_WRAPPER(int, pthread_rwlock_rdlock, (pthread_rwlock_t *l), (l))
WAIT_WRAPPER(int, pthread_rwlock_wrlock, (pthread_rwlock_t *l), (l))
WAIT_WRAPPER(int, pthread_join, (pthread_t th, void **ret), (th, ret))
WAIT_WRAPPER(int, sem_wait, (sem_t *s), (s))
WAIT_WRAPPER(int, sem_timedwait, (sem_t *s, const struct timespec *ts), (s, ts))
WAIT_WRAPPER(pid_t, waitpid, (pid_t pid, int *status, int options), (pid, status, options))
WAIT_WRAPPER(pid_t, wait4, (pid_t pid, int *status, int options, struct rusage *ru),
	     (pid, status, options, ru))
WAIT_WRAPPER(pid_t, wait, (int *status), (status))
WAIT_WRAPPER(ssize_t, write, (int fd, const void *buf, size_t len), (fd, buf, len))
WAIT_WRAPPER(ssize_t, send, (int fd, const void *buf, size_t len, int flags), (fd, buf, len, flags))
WAIT_WRAPPER(ssize_t, sendto, (int fd, const void *buf, size_t len, int flags,
			       const struct sockaddr *a, socklen_t alen), (fd, buf, len, flags, a, alen))
WAIT_WRAPPER(ssize_t, sendmsg, (int fd, const struct msghdr *m, int flags), (fd, m, flags))
WAIT_WRAPPER(int, fsync, (int fd), (fd))
WAIT_WRAPPER(int, fdatasync, (int fd), (fd))
WAIT_WRAPPER(int, flock, (int fd, int op), (fd, op))
/* _FORTIFY_SOURCE's checked versions, which fortified programs call instead */
WAIT_WRAPPER(ssize_t, __read_chk, (int fd, void *buf, size_t len, size_t buflen),
	     (fd, buf, len, buflen))
WAIT_WRAPPER(ssize_t, __recv_chk, (int fd, void *buf, size_t len, size_t buflen, int flags),
	     (fd, buf, len, buflen, flags))
WAIT_WRAPPER(ssize_t, __recvfrom_chk, (int fd, void *buf, size_t len, size_t buflen, int flags,
				       struct sockaddr *a, socklen_t *alen),
	     (fd, buf, len, buflen, flags, a, alen))
WAIT_WRAPPER(int, __poll_chk, (struct pollfd *fds, nfds_t n, int timeout, size_t fdslen),
	     (fds, n, timeout, fdslen))
/* clang-format on */

#define RESOLVE(name) *(void **)&real_##name = dlsym(RTLD_NEXT, #name)

/* Look up every real function, at load time. */
static __attribute__((constructor)) void resolve_all(void)
{
	if (!real_write)
		RESOLVE(write);
	if (!real_send)
		RESOLVE(send);
	if (!real_sendto)
		RESOLVE(sendto);
	if (!real_sendmsg)
		RESOLVE(sendmsg);
	if (!real_fsync)
		RESOLVE(fsync);
	if (!real_fdatasync)
		RESOLVE(fdatasync);
	if (!real_flock)
		RESOLVE(flock);
	if (!real___read_chk)
		RESOLVE(__read_chk);
	if (!real___recv_chk)
		RESOLVE(__recv_chk);
	if (!real___recvfrom_chk)
		RESOLVE(__recvfrom_chk);
	if (!real___poll_chk)
		RESOLVE(__poll_chk);
	if (!real_nanosleep)
		RESOLVE(nanosleep);
	if (!real_clock_nanosleep)
		RESOLVE(clock_nanosleep);
	if (!real_sleep)
		RESOLVE(sleep);
	if (!real_usleep)
		RESOLVE(usleep);
	if (!real_poll)
		RESOLVE(poll);
	if (!real_ppoll)
		RESOLVE(ppoll);
	if (!real_select)
		RESOLVE(select);
	if (!real_pselect)
		RESOLVE(pselect);
	if (!real_epoll_wait)
		RESOLVE(epoll_wait);
	if (!real_epoll_pwait)
		RESOLVE(epoll_pwait);
	if (!real_read)
		RESOLVE(read);
	if (!real_recv)
		RESOLVE(recv);
	if (!real_recvfrom)
		RESOLVE(recvfrom);
	if (!real_recvmsg)
		RESOLVE(recvmsg);
	if (!real_accept)
		RESOLVE(accept);
	if (!real_accept4)
		RESOLVE(accept4);
	if (!real_connect)
		RESOLVE(connect);
	if (!real_pthread_cond_wait)
		RESOLVE(pthread_cond_wait);
	if (!real_pthread_cond_timedwait)
		RESOLVE(pthread_cond_timedwait);
	if (!real_pthread_cond_clockwait)
		RESOLVE(pthread_cond_clockwait);
	if (!real_pthread_mutex_lock)
		RESOLVE(pthread_mutex_lock);
	if (!real_pthread_rwlock_rdlock)
		RESOLVE(pthread_rwlock_rdlock);
	if (!real_pthread_rwlock_wrlock)
		RESOLVE(pthread_rwlock_wrlock);
	if (!real_pthread_join)
		RESOLVE(pthread_join);
	if (!real_sem_wait)
		RESOLVE(sem_wait);
	if (!real_sem_timedwait)
		RESOLVE(sem_timedwait);
	if (!real_waitpid)
		RESOLVE(waitpid);
	if (!real_wait4)
		RESOLVE(wait4);
	if (!real_wait)
		RESOLVE(wait);
}
