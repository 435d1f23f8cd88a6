/* SPDX-License-Identifier: MIT */
/*
 * signals.c - the program and the profiler share signals without noticing.
 *
 * The library holds some signals: the sampling signal (sample.c) and the
 * signals whose default action ends the program (fatal.c). For a held
 * signal the kernel has our handler, and this file keeps the program's view,
 * the "virtual" disposition: what the program set, or what the kernel had
 * before we came (SIG_DFL). The wrappers below show the program only that:
 *
 *  - sigaction/signal/bsd_signal/sysv_signal/siginterrupt: a held signal reads
 *    back as its virtual disposition. Setting SIG_DFL keeps our handler;
 *    setting a handler or SIG_IGN on a deadly signal gives the signal to the
 *    program; on the sampling signal it moves sampling to a free real-time
 *    signal first, or, when none is free (a Go runtime takes them all), keeps
 *    our handler and calls the program's from it (chaining, see deliver()).
 *  - a held signal that is not one of our samples (sent by kill, sigqueue,
 *    raise, a timer of the program...) gets the virtual disposition: SIG_DFL
 *    kills the program by that very signal after the file is finished,
 *    SIG_IGN drops it, a handler runs.
 *  - sigprocmask/pthread_sigmask: the kernel mask never holds the sampling
 *    signal when the program blocks a broad set (a thread blocking "all
 *    signals" would otherwise queue a real-time signal per sample); the
 *    program reads it back blocked all the same (a per-thread shadow bit).
 *    A set that names the sampling signal specifically (not a broad set),
 *    and sigwait/sigwaitinfo/sigtimedwait/signalfd on such a set, mean the
 *    program wants that number: sampling moves away first.
 *  - in a process that is not the session's (a vfork child, which shares our
 *    memory: Python's subprocess, posix_spawn, gdb), every wrapper is the
 *    plain real call and touches nothing of ours.
 *
 * Residual differences (documented in the README's Limits):
 *  - a chained handler runs inside ours: SA_RESTART is ours (the kernel
 *    restarts system calls as our handler asks), the program's SA_ONSTACK is
 *    ours (we always ask for the alternate stack), and the kernel sees ours;
 *  - after sampling moved, samples already queued under the old number reach
 *    the program's new handler (at most one per thread), and a thread whose
 *    shadow bit blocked the old number has it unblocked in the kernel;
 *  - a program that routes its own fd's readiness to the sampling signal with
 *    F_SETSIG gets those signals dropped as samples (si_code POLL_*).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "wrap.h"

#ifndef SA_RESTORER
#define SA_RESTORER 0x04000000
#endif

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);
typedef int (*sigtimedwait_fn)(const sigset_t *, siginfo_t *, const struct timespec *);
typedef int (*signalfd_fn)(int, const sigset_t *, int);
typedef int (*siginterrupt_fn)(int, int);

static sigaction_fn real_sigaction;
static sigmask_fn real_sigprocmask, real_pthread_sigmask;
static signal_fn real_signal, real_sysv_signal;
static sigtimedwait_fn real_sigtimedwait;
static signalfd_fn real_signalfd;
static siginterrupt_fn real_siginterrupt;

/* The held signals: who holds each and the program's view of it. */
static unsigned char holder[_NSIG];
static struct sigaction virt[_NSIG];
static unsigned seq;	      /* odd while the table changes (read by handlers) */
static int table_lock;	      /* a spin lock, taken with every signal blocked */
static void *restorer;	      /* glibc's sa_restorer, as the kernel reports it */
static sigset_t ever_sampled; /* numbers that carried samples at some time */
static sigset_t interest;     /* numbers the program showed it wants */
static sigset_t interrupting; /* siginterrupt(sig, 1): signal() without SA_RESTART */
static pid_t session_pid;     /* the process whose memory this is (not a vfork child's) */
static pthread_mutex_t move_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long stray_sigios; /* the kernel's SIGIOs for our descriptors, dropped */

/* The sampling signal the program believes blocked on this thread (0: none). */
static AP_TLS int shadow_signo;

/* In a forked child the memory is its own: it is the session's process now. */
static void on_fork_child(void)
{
	session_pid = (pid_t)syscall(SYS_getpid);
}

/*
 * Find the real functions (idempotent: it only stores what dlsym finds, the
 * same in a vfork child). Not async-signal-safe.
 */
static void resolve(void)
{
	if (__atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE))
		return;
	real_sigprocmask = (sigmask_fn)dlsym(RTLD_NEXT, "sigprocmask");
	real_pthread_sigmask = (sigmask_fn)dlsym(RTLD_NEXT, "pthread_sigmask");
	real_signal = (signal_fn)dlsym(RTLD_NEXT, "signal");
	real_sysv_signal = (signal_fn)dlsym(RTLD_NEXT, "sysv_signal");
	real_sigtimedwait = (sigtimedwait_fn)dlsym(RTLD_NEXT, "sigtimedwait");
	real_signalfd = (signalfd_fn)dlsym(RTLD_NEXT, "signalfd");
	real_siginterrupt = (siginterrupt_fn)dlsym(RTLD_NEXT, "siginterrupt");
	__atomic_store_n(&real_sigaction, (sigaction_fn)dlsym(RTLD_NEXT, "sigaction"),
			 __ATOMIC_RELEASE);
}

/*
 * At the session's start: this process owns the table; a forked child owns
 * its copy. Not async-signal-safe.
 */
void signals__init(void)
{
	static bool registered;

	session_pid = (pid_t)syscall(SYS_getpid);
	if (!registered && pthread_atfork(NULL, NULL, on_fork_child) == 0)
		registered = true;
	resolve();
}

/*
 * Is the caller outside the session's process, i.e. a vfork child sharing
 * our memory (or nothing was set up)? Then wrappers make the plain call.
 * The raw system call: no pid cache can lie. Async-signal-safe.
 */
static bool foreign(void)
{
	return !session_pid || (pid_t)syscall(SYS_getpid) != session_pid;
}

/* The real sigaction. Async-signal-safe once signals__init() has run. */
int ap_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	sigaction_fn fn = __atomic_load_n(&real_sigaction, __ATOMIC_ACQUIRE);

	if (!fn) {
		resolve();
		fn = real_sigaction;
	}
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	return fn(sig, act, old);
}

/* The calling thread's signal mask, past the wrappers. Returns 0 or -errno. Async-signal-safe. */
int ap_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	return syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8) < 0 ? -errno : 0;
}

/*
 * Block the sampling signal on the calling thread (around the library's own
 * writes from normal context, so its handler cannot run in the middle);
 * ap_sigmask(SIG_SETMASK, old, NULL) undoes it. Async-signal-safe.
 */
void ap_block_sampling(sigset_t *old)
{
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, autoprof.signo);
	ap_sigmask(SIG_BLOCK, &block, old);
}

/* Take the table: every signal blocked on this thread, then the spin lock. */
static void table_enter(sigset_t *old)
{
	sigset_t all;

	sigfillset(&all);
	ap_sigmask(SIG_BLOCK, &all, old);
	while (__atomic_exchange_n(&table_lock, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	__atomic_fetch_add(&seq, 1, __ATOMIC_ACQ_REL);
}

static void table_leave(const sigset_t *old)
{
	__atomic_fetch_add(&seq, 1, __ATOMIC_ACQ_REL);
	__atomic_store_n(&table_lock, 0, __ATOMIC_RELEASE);
	ap_sigmask(SIG_SETMASK, old, NULL);
}

/*
 * A consistent copy of sig's holder and virtual disposition, without locks
 * (a writer on another thread is waited out). Async-signal-safe.
 */
static int read_virt(int sig, struct sigaction *out)
{
	unsigned s;
	int who;

	for (;;) {
		s = __atomic_load_n(&seq, __ATOMIC_ACQUIRE);
		if (s & 1) {
			sched_yield();
			continue;
		}
		who = __atomic_load_n(&holder[sig], __ATOMIC_RELAXED);
		memcpy(out, &virt[sig], sizeof(*out));
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&seq, __ATOMIC_RELAXED) == s)
			return who;
	}
}

/*
 * What sigaction() hands back for a disposition: as glibc's does from the
 * kernel's (handler, flags, restorer, the kernel's 64 bits of mask; the
 * rest of *old untouched).
 */
static void put_old(struct sigaction *old, const struct sigaction *v)
{
	old->sa_handler = v->sa_handler;
	old->sa_flags = v->sa_flags;
	old->sa_restorer = v->sa_restorer;
	memcpy(&old->sa_mask, &v->sa_mask, _NSIG / 8);
}

/* act as the kernel would store it (and report it back). */
static void normalize(struct sigaction *v, const struct sigaction *act)
{
	*v = *act;
	v->sa_flags |= SA_RESTORER;
	v->sa_restorer = (void (*)(void))restorer;
	sigdelset(&v->sa_mask, SIGKILL);
	sigdelset(&v->sa_mask, SIGSTOP);
}

/*
 * Hold sig for `who` with our handler `ours`. A signal nobody holds is taken
 * only at SIG_DFL (or SIG_IGN, by the sampler only: an ignored deadly signal
 * must stay ignored across exec); its disposition becomes the virtual one; one
 * held already changes holder and keeps the program's view. Returns 0,
 * -EBUSY (the program handles it) or -errno. Not async-signal-safe.
 */
int signals__hold(int sig, int who, const struct sigaction *ours)
{
	struct sigaction cur, back;
	sigset_t old;
	int err = 0;

	if (sig <= 0 || sig >= _NSIG || sig == SIGKILL || sig == SIGSTOP)
		return -EINVAL;
	table_enter(&old);
	if (holder[sig] == AP_HOLD_NONE) {
		if (ap_sigaction(sig, NULL, &cur) < 0)
			err = -errno;
		else if (cur.sa_handler != SIG_DFL &&
			 (cur.sa_handler != SIG_IGN || who == AP_HOLD_FATAL))
			err = -EBUSY; /* handled, or ignored, which exec must pass on */
		else
			virt[sig] = cur;
	}
	if (!err && ap_sigaction(sig, ours, NULL) < 0)
		err = -errno;
	if (!err) {
		__atomic_store_n(&holder[sig], (unsigned char)who, __ATOMIC_RELAXED);
		if (!restorer && ap_sigaction(sig, NULL, &back) == 0)
			restorer = (void *)back.sa_restorer;
	}
	table_leave(&old);
	return err;
}

/* Give sig back to the program with its virtual disposition. Not async-signal-safe. */
void signals__release(int sig)
{
	sigset_t old;

	if (sig <= 0 || sig >= _NSIG)
		return;
	table_enter(&old);
	if (holder[sig] != AP_HOLD_NONE) {
		ap_sigaction(sig, &virt[sig], NULL);
		holder[sig] = AP_HOLD_NONE;
	}
	table_leave(&old);
}

/* Who holds sig (AP_HOLD_*). Async-signal-safe. */
int signals__holder(int sig)
{
	return sig > 0 && sig < _NSIG ? __atomic_load_n(&holder[sig], __ATOMIC_RELAXED) : 0;
}

/* Remember that sig carries samples (its POLL_* deliveries are ours). Not async-signal-safe. */
void signals__note_sampling(int sig)
{
	sigset_t old;

	table_enter(&old);
	sigaddset(&ever_sampled, sig);
	table_leave(&old);
}

/*
 * Is this delivery one of our samples (or a late one, for a thread or a
 * number no longer sampled)? Our timers carry a magic value; perf events
 * signal readiness with si_code POLL_IN/POLL_HUP. Async-signal-safe.
 */
bool signals__is_sample(int sig, const siginfo_t *si)
{
	if (timer__is_ours(si))
		return true;
	return si->si_code >= POLL_IN && si->si_code <= POLL_HUP && sigismember(&ever_sampled, sig);
}

/*
 * Is this SIGIO the kernel's, for one of our descriptors? When sampling is
 * (or was) on a real-time signal and the queue was full, the kernel sends a
 * plain SIGIO instead (fs/fcntl.c, send_sigio_to_task; si_code SI_KERNEL).
 * A program whose SIGIO is at SIG_DFL has no O_ASYNC descriptor of its own
 * (its first SIGIO would kill it), so that SIGIO is ours: counted, and
 * dropped. Async-signal-safe.
 */
bool signals__is_our_sigio(int sig, const siginfo_t *si)
{
	struct sigaction a;
	bool rt = false;

	if (sig != SIGIO || si->si_code != SI_KERNEL)
		return false;
	for (int s = SIGRTMIN; s <= SIGRTMAX && !rt; s++)
		rt = sigismember(&ever_sampled, s);
	if (!rt || read_virt(SIGIO, &a) == AP_HOLD_NONE || a.sa_handler != SIG_DFL)
		return false;
	__atomic_fetch_add(&stray_sigios, 1, __ATOMIC_RELAXED);
	return true;
}

/* How many SIGIOs signals__is_our_sigio() dropped. */
unsigned long signals__stray_sigios(void)
{
	return __atomic_load_n(&stray_sigios, __ATOMIC_RELAXED);
}

/* What the kernel does by default with sig when it is not caught. */
enum dfl_action { DFL_TERM, DFL_IGN, DFL_STOP };

static enum dfl_action default_action(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
		return DFL_IGN;
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return DFL_STOP;
	default:
		return DFL_TERM;
	}
}

/*
 * Run the program's handler a for sig from inside ours, as the kernel would
 * have: its mask (the interrupted one, its sa_mask, sig itself unless
 * SA_NODEFER), SA_RESETHAND, SA_SIGINFO. Async-signal-safe.
 */
static void chain(int sig, siginfo_t *si, void *uc, const struct sigaction *a)
{
	ucontext_t *ctx = uc;
	sigset_t mask = ctx->uc_sigmask, saved;
	void (*fn)(int, siginfo_t *, void *) = a->sa_sigaction;
	void (*plain)(int) = a->sa_handler;
	int flags = a->sa_flags;

	if (flags & SA_RESETHAND) {
		sigset_t old;

		table_enter(&old);
		if (virt[sig].sa_handler == a->sa_handler)
			virt[sig].sa_handler = SIG_DFL; /* the kernel keeps the flags */
		table_leave(&old);
	}
	sigorset(&mask, &mask, &a->sa_mask);
	if (!(flags & SA_NODEFER))
		sigaddset(&mask, sig);
	ap_sigmask(SIG_SETMASK, &mask, &saved);
	if (flags & SA_SIGINFO)
		fn(sig, si, uc);
	else
		plain(sig);
	ap_sigmask(SIG_SETMASK, &saved, NULL);
}

/* Threads that stepped aside for the program's own sampling signal (see below), and its number. */
static unsigned long stepped_aside;
static int stepped_signo;

/* How many threads stepped aside, and the number they stepped aside from (0: none). */
unsigned long signals__stepped_aside(int *signo)
{
	if (signo)
		*signo = __atomic_load_n(&stepped_signo, __ATOMIC_RELAXED);
	return __atomic_load_n(&stepped_aside, __ATOMIC_RELAXED);
}

/*
 * The program's own signal sig (not a sample) reached a thread on which the
 * program believes it blocked (the shadow bit): a program that blocks every
 * signal and reads them with signalfd or sigwait* sent it to itself. Give
 * it to the program as the kernel would have, pending and blocked: this
 * thread's sampler ends (its notifications would be read as the program's
 * signals otherwise), a notification of ours already pending is taken out,
 * the signal is blocked for real when the handler returns and queued again
 * with its siginfo. Counted, said at the end. False when the thread does
 * not believe it blocked. Async-signal-safe.
 */
static bool defer_to_program(int sig, siginfo_t *si, void *uc)
{
	pid_t pid = (pid_t)syscall(SYS_getpid), tid = (pid_t)syscall(SYS_gettid);
	struct timespec zero = {0, 0};
	siginfo_t again = *si, other[8];
	sigset_t one;
	int n = 0;

	if (shadow_signo != sig)
		return false;
	if (thread__step_aside()) {
		__atomic_store_n(&stepped_signo, sig, __ATOMIC_RELAXED);
		__atomic_fetch_add(&stepped_aside, 1, __ATOMIC_RELAXED);
	}
	sigemptyset(&one);
	sigaddset(&one, sig);
	while (n < 8 && syscall(SYS_rt_sigtimedwait, &one, &other[n], &zero, _NSIG / 8) > 0)
		if (!signals__is_sample(sig, &other[n]))
			n++; /* the program's: queued again after this one */
	sigaddset(&((ucontext_t *)uc)->uc_sigmask, sig);
	shadow_signo = 0;
	/* Sent to this thread, or to the process (then to its shared queue,
	 * which only the main thread may fill with a kill()'s siginfo). */
	if (si->si_code != SI_TKILL && si->si_code >= 0 && tid != pid)
		again.si_code = SI_QUEUE;
	if (si->si_code == SI_TKILL)
		syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &again);
	else if (syscall(SYS_rt_sigqueueinfo, pid, sig, &again) < 0)
		syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &again);
	for (int i = 0; i < n; i++)
		syscall(SYS_rt_tgsigqueueinfo, pid, tid, sig, &other[i]);
	return true;
}

/*
 * A held signal that is not a sample reached one of our handlers: give it
 * the program's disposition. errno is the interrupted code's on entry and
 * on return (the program's handler sees it as the kernel would leave it).
 * Async-signal-safe.
 */
void signals__deliver(int sig, siginfo_t *si, void *uc)
{
	struct sigaction a;

	if (signals__holder(sig) == AP_HOLD_SAMPLE && defer_to_program(sig, si, uc))
		return;
	read_virt(sig, &a);
	if (a.sa_handler == SIG_IGN)
		return;
	if (a.sa_handler != SIG_DFL) {
		chain(sig, si, uc, &a);
		return;
	}
	switch (default_action(sig)) {
	case DFL_IGN:
		return;
	case DFL_STOP:
		/* The stop is the kernel's; only the stop signal's number differs. */
		syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), SIGSTOP);
		return;
	case DFL_TERM:
		sigdelset(&((ucontext_t *)uc)->uc_sigmask, sig);
		fatal__die(sig, si);
		return;
	}
}

/* Is sig free to carry samples: at SIG_DFL for the program, and never wanted by it? */
static bool free_for_sampling(int sig)
{
	struct sigaction cur;
	int who = read_virt(sig, &cur);

	if (who == AP_HOLD_SAMPLE || sigismember(&interest, sig))
		return false;
	if (who == AP_HOLD_NONE && ap_sigaction(sig, NULL, &cur) < 0)
		return false;
	return !(cur.sa_flags & SA_SIGINFO) && cur.sa_handler == SIG_DFL;
}

/* The i-th signal sampling may move to (0 when there are no more). */
static int move_target(int i)
{
	static const int standard[] = {SIGPROF, SIGVTALRM};
	int n = (int)(sizeof(standard) / sizeof(standard[0]));

	if (i < n)
		return standard[i];
	return SIGRTMAX - (i - n) >= SIGRTMIN ? SIGRTMAX - (i - n) : 0;
}

/*
 * The program wants the sampling signal `from`: move sampling to a free
 * signal (move_target()); `from` stays held by fatal.c at the program's virtual
 * disposition (the caller then changes that as the program asked).
 * Returns true when sampling is no longer on `from`. Not async-signal-safe.
 */
static bool move_sampling(int from)
{
	bool moved = false;

	if (from != __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE) ||
	    signals__holder(from) != AP_HOLD_SAMPLE)
		return true;
	pthread_mutex_lock(&move_lock);
	/* Standard signals first (SIGPROF, then SIGVTALRM): pending at most once
	 * per thread, they cannot fill the real-time queue, and debuggers pass
	 * them silently; then the real-time ones, from the top. */
	for (int i = 0, to; (to = move_target(i)) && !moved; i++) {
		if (to == from || !free_for_sampling(to) || sample__install(to))
			continue;
		__atomic_store_n(&autoprof.signo, to, __ATOMIC_RELEASE);
		thread__reroute(to);
		fatal__take(from);
		moved = true;
		pr_warn("the program handles signal %d itself; profiling moves to signal %d", from,
			to);
	}
	if (!moved) {
		static int said;

		if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
			pr_info("the program uses signal %d and no other signal is free; "
				"its handler runs from ours",
				from);
	}
	pthread_mutex_unlock(&move_lock);
	return moved;
}

/* Does set hold every real-time signal (a broad set, not a choice of ours)? */
static bool broad(const sigset_t *set)
{
	for (int s = SIGRTMIN; s <= SIGRTMAX; s++)
		if (!sigismember(set, s))
			return false;
	return true;
}

/* The program named these signals specifically: keep sampling off them. */
static void note_interest(const sigset_t *set)
{
	sigset_t old;

	table_enter(&old);
	for (int s = 1; s < _NSIG; s++)
		if (sigismember(set, s))
			sigaddset(&interest, s);
	table_leave(&old);
}

/*
 * A set the program passes to block or wait for signals: a specific one
 * naming the sampling signal moves sampling away (the number is the
 * program's); a broad one gets the sampling signal taken out, in copy.
 * Returns the set to pass on and sets *stripped. Not async-signal-safe.
 */
static const sigset_t *program_set(const sigset_t *set, sigset_t *copy, bool *stripped)
{
	int signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);

	*stripped = false;
	if (!set || signals__holder(signo) != AP_HOLD_SAMPLE || !sigismember(set, signo))
		return set;
	if (!broad(set)) {
		note_interest(set);
		if (move_sampling(signo))
			return set;
	}
	*copy = *set;
	sigdelset(copy, signo);
	*stripped = true;
	return copy;
}

AP_API int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	struct sigaction prev;
	sigset_t mask;
	int ret = 0;

	if (sig <= 0 || sig >= _NSIG || (act && foreign()))
		return ap_sigaction(sig, act, old);
	if (!act) {
		/* A read: no lock. A vfork child reads its own table (it may have
		 * changed it with the plain calls it makes). */
		if (read_virt(sig, &prev) == AP_HOLD_NONE || foreign())
			return ap_sigaction(sig, NULL, old);
		if (old)
			put_old(old, &prev);
		return 0;
	}
	if (act->sa_handler != SIG_DFL && signals__holder(sig) == AP_HOLD_SAMPLE) {
		sigset_t one;

		sigemptyset(&one);
		sigaddset(&one, sig);
		note_interest(&one);
		move_sampling(sig);
	}
	table_enter(&mask);
	switch (holder[sig]) {
	case AP_HOLD_NONE:
		ret = ap_sigaction(sig, act, old);
		break;
	case AP_HOLD_FATAL:
		prev = virt[sig];
		if (act && act->sa_handler != SIG_DFL) {
			ret = ap_sigaction(sig, act, NULL);
			if (ret == 0)
				holder[sig] = AP_HOLD_NONE;
		} else if (act) {
			normalize(&virt[sig], act);
		}
		if (ret == 0 && old)
			put_old(old, &prev);
		break;
	case AP_HOLD_SAMPLE:
		/* Still ours: SIG_DFL, or no free signal to move to (chaining). */
		prev = virt[sig];
		if (act)
			normalize(&virt[sig], act);
		if (old)
			put_old(old, &prev);
		break;
	}
	table_leave(&mask);
	/* The program puts a deadly signal back to SIG_DFL: take it again. */
	if (ret == 0 && act && act->sa_handler == SIG_DFL && signals__holder(sig) == AP_HOLD_NONE &&
	    __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE))
		fatal__take(sig);
	return ret;
}

/* signal() and friends, through our sigaction: as glibc builds them. */
static sighandler_t set_handler(int sig, sighandler_t handler, int flags, bool mask_self)
{
	struct sigaction act, old;

	if (handler == SIG_ERR || sig <= 0 || sig >= _NSIG) {
		errno = EINVAL;
		return SIG_ERR;
	}
	memset(&act, 0, sizeof(act));
	act.sa_handler = handler;
	sigemptyset(&act.sa_mask);
	if (mask_self)
		sigaddset(&act.sa_mask, sig);
	act.sa_flags = flags;
	if (sigaction(sig, &act, &old) < 0)
		return SIG_ERR;
	return old.sa_handler;
}

AP_API sighandler_t signal(int sig, sighandler_t handler)
{
	if (foreign() && real_signal)
		return real_signal(sig, handler);
	return set_handler(
	    sig, handler,
	    sig > 0 && sig < _NSIG && sigismember(&interrupting, sig) ? 0 : SA_RESTART, true);
}

AP_API sighandler_t bsd_signal(int sig, sighandler_t handler)
{
	return signal(sig, handler);
}

AP_API sighandler_t sysv_signal(int sig, sighandler_t handler)
{
	if (foreign() && real_sysv_signal)
		return real_sysv_signal(sig, handler);
	return set_handler(sig, handler, SA_RESETHAND | SA_NODEFER, false);
}

AP_API sighandler_t __sysv_signal(int sig, sighandler_t handler)
{
	return sysv_signal(sig, handler);
}

AP_API int siginterrupt(int sig, int flag)
{
	struct sigaction act;

	if (foreign() && real_siginterrupt)
		return real_siginterrupt(sig, flag);
	if (sigaction(sig, NULL, &act) < 0)
		return -1;
	if (flag) {
		sigaddset(&interrupting, sig);
		act.sa_flags &= ~SA_RESTART;
	} else {
		sigdelset(&interrupting, sig);
		act.sa_flags |= SA_RESTART;
	}
	return sigaction(sig, &act, NULL);
}

/*
 * Is this libunwind blocking signals around its cache lock while we unwind
 * in the sampling handler? Then the call is a no-op (the handler's mask
 * blocks them all), and *old gets a full set for the matching restore.
 * Async-signal-safe.
 */
static bool redundant_in_handler(sigset_t *old, void *caller)
{
	if (!unwind__in_handler() || !unwind__owns_pc((uintptr_t)caller))
		return false;
	if (old)
		sigfillset(old);
	return true;
}

/*
 * The program's sigprocmask/pthread_sigmask (next): the kernel never gets
 * the sampling signal in a broad set; the thread's shadow bit remembers that
 * the program blocked it, and the old set read back shows it. Returns what
 * next returns.
 */
static int program_mask(sigmask_fn next, int how, const sigset_t *set, sigset_t *old, void *caller)
{
	int signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);
	bool stripped = false, named;
	const sigset_t *use = set;
	sigset_t copy;
	int shadow = shadow_signo, ret;

	if (signals__holder(signo) != AP_HOLD_SAMPLE || unwind__is_profiler_pc((uintptr_t)caller))
		return next(how, set, old);
	named = set && sigismember(set, signo);
	/* Only a call that changes our state needs to know it is not in a vfork
	 * child (a system call); reading the shadow bit back is right in one too. */
	if ((named || (set && how == SIG_SETMASK && shadow)) && foreign())
		return next(how, set, old);
	if (set && how != SIG_UNBLOCK && named) {
		use = program_set(set, &copy, &stripped);
		signo = __atomic_load_n(&autoprof.signo, __ATOMIC_ACQUIRE);
	}
	ret = next(how, use, old);
	if (ret != 0)
		return ret;
	if (old && shadow && shadow == signo)
		sigaddset(old, signo);
	if (!set)
		return ret;
	if (how == SIG_SETMASK)
		shadow_signo = stripped ? signo : 0;
	else if (how == SIG_BLOCK && stripped)
		shadow_signo = signo;
	else if (how == SIG_UNBLOCK && named)
		shadow_signo = 0;
	return ret;
}

AP_API int sigprocmask(int how, const sigset_t *set, sigset_t *old)
{
	if (redundant_in_handler(old, __builtin_return_address(0)))
		return 0;
	if (!real_sigprocmask)
		resolve();
	if (!real_sigprocmask) {
		errno = ENOSYS;
		return -1;
	}
	return program_mask(real_sigprocmask, how, set, old, __builtin_return_address(0));
}

AP_API int pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	if (redundant_in_handler(old, __builtin_return_address(0)))
		return 0;
	if (!real_pthread_sigmask)
		resolve();
	if (!real_pthread_sigmask)
		return ENOSYS;
	return program_mask(real_pthread_sigmask, how, set, old, __builtin_return_address(0));
}

/*
 * At the first install on the starting thread: an image exec'd with the
 * sampling signal blocked (the program blocked it, or a broad set, before
 * exec) keeps it blocked in its own view only. Not async-signal-safe.
 */
void signals__adopt_mask(int signo)
{
	sigset_t cur, one;

	if (ap_sigmask(SIG_BLOCK, NULL, &cur) || !sigismember(&cur, signo))
		return;
	sigemptyset(&one);
	sigaddset(&one, signo);
	ap_sigmask(SIG_UNBLOCK, &one, NULL);
	shadow_signo = signo;
}

/* The calling thread's shadow bit, for a thread it creates (interpose.c). */
int signals__shadow(void)
{
	return shadow_signo;
}

void signals__set_shadow(int signo)
{
	shadow_signo = signo;
}

/*
 * Before a real exec: the next image inherits the mask the program believes
 * it has (the shadow bit becomes a real block); after a failed exec the
 * kernel mask goes back. Works in a vfork child (only its own mask changes).
 * Async-signal-safe.
 */
void signals__before_exec(sigset_t *saved)
{
	sigset_t add;

	ap_sigmask(SIG_BLOCK, NULL, saved);
	if (!shadow_signo)
		return;
	sigemptyset(&add);
	sigaddset(&add, shadow_signo);
	ap_sigmask(SIG_BLOCK, &add, NULL);
}

void signals__exec_failed(const sigset_t *saved)
{
	ap_sigmask(SIG_SETMASK, saved, NULL);
}

/*
 * A wait set of the program (sigwait & co, signalfd): a specific one naming
 * the sampling signal moves sampling away (program_set()); a broad one is
 * passed whole (see program_wait() and signalfd()).
 */
static const sigset_t *wait_set(const sigset_t *set, sigset_t *copy)
{
	bool stripped;

	if (foreign() || !set || broad(set))
		return set;
	return program_set(set, copy, &stripped);
}

/*
 * A wait of the program for the signals of set (sigwait & co), with the
 * sampling signal left in a broad set: the program may send it to itself
 * (signals.c's defer_to_program() makes it pending); a notification of
 * ours that the wait took instead is dropped and the wait goes on (until
 * the deadline, for a timed wait). Returns what sigtimedwait returns.
 */
static int program_wait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	sigset_t copy;
	siginfo_t mine;
	const sigset_t *use = wait_set(set, &copy);
	struct timespec now, end = {0, 0}, left;
	int sig;

	if (!info)
		info = &mine;
	if (timeout) {
		clock_gettime(CLOCK_MONOTONIC, &end);
		end.tv_sec += timeout->tv_sec;
		end.tv_nsec += timeout->tv_nsec;
		if (end.tv_nsec >= 1000000000L) {
			end.tv_sec++;
			end.tv_nsec -= 1000000000L;
		}
	}
	for (;;) {
		if (timeout) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			left.tv_sec = end.tv_sec - now.tv_sec;
			left.tv_nsec = end.tv_nsec - now.tv_nsec;
			if (left.tv_nsec < 0) {
				left.tv_sec--;
				left.tv_nsec += 1000000000L;
			}
			if (left.tv_sec < 0)
				left.tv_sec = left.tv_nsec = 0;
		}
		sig = real_sigtimedwait(use, info, timeout ? &left : NULL);
		if (sig <= 0 || foreign() || signals__holder(sig) != AP_HOLD_SAMPLE ||
		    !signals__is_sample(sig, info))
			return sig;
	}
}

AP_API int sigwait(const sigset_t *set, int *sig)
{
	int got;

	if (!real_sigtimedwait)
		resolve();
	if (!real_sigtimedwait)
		return ENOSYS;
	do
		got = program_wait(set, NULL, NULL);
	while (got < 0 && errno == EINTR); /* sigwait does not fail with EINTR */
	if (got < 0)
		return errno;
	*sig = got;
	return 0;
}

AP_API int sigwaitinfo(const sigset_t *set, siginfo_t *info)
{
	if (!real_sigtimedwait)
		resolve();
	if (!real_sigtimedwait) {
		errno = ENOSYS;
		return -1;
	}
	return program_wait(set, info, NULL);
}

AP_API int sigtimedwait(const sigset_t *set, siginfo_t *info, const struct timespec *timeout)
{
	if (!real_sigtimedwait)
		resolve();
	if (!real_sigtimedwait) {
		errno = ENOSYS;
		return -1;
	}
	return program_wait(set, info, timeout);
}

/*
 * signalfd: a broad mask keeps the sampling signal (the program may send it
 * to itself, defer_to_program()): our notifications are delivered to our
 * handler as soon as they are raised (user time only: the thread never
 * reaches a read of the fd with one pending), so the fd reads the program's.
 */
AP_API int signalfd(int fd, const sigset_t *mask, int flags)
{
	sigset_t copy;

	if (!real_signalfd)
		resolve();
	if (!real_signalfd) {
		errno = ENOSYS;
		return -1;
	}
	return real_signalfd(fd, wait_set(mask, &copy), flags);
}
