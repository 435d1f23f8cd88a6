/* SPDX-License-Identifier: MIT */
/*
 * internal.h - the preload library's session: the one profile of this
 * process image, from the constructor (entry.c) to the last flush.
 *
 *   session/lifecycle.c   start, stop, fork, exec: the order of things
 *   session/samplers.c    one sampler per thread: start and stop (samplers.h:
 *                         process_events.c deadly signals, reroute, seccomp;
 *                         handler/sampler_events.c a thread's events,
 *                         handler/registry.c all the threads)
 *   session/settle.c      the configuration settled once: clamps, probes, fallbacks
 *   session/mappings.c    MMAP2 records of what is mapped at start
 *   session/file_features.c, stat_records.c, child_env.c
 *   session/extra_events.c  the attrs after the counters (AUTOPROF_AGGREGATE_CHECK, OFFCPU)
 *   session/offcpu.c        off-CPU time, read when a blocking call returns (wrap/waits.c)
 *   session/control.c     `autoprof ctl PID start|stop|dump|status`: the endpoint
 *                         (handler/control_request.c answers; handler/windows.c:
 *                         AUTOPROF_WINDOW, one file per window of time)
 *
 * The handler layer (handler/handler.h; what the session calls there
 * outside any handler: handler/setup.h) and the wrappers of libc
 * (wrap/wrap.h) sit beside it; common/common.h is shared with the launcher.
 * The session registers with the handler layer what its handlers read
 * (image__register) and may call (fatal__set_stop, the image's snapshot)
 * before they are installed; the handlers never read struct ap_session.
 */
#ifndef AUTOPROF_PRELOAD_INTERNAL_H
#define AUTOPROF_PRELOAD_INTERNAL_H

#include "handler/handler.h"
#include "handler/setup.h"
#include "session/settle.h"

/* ---- session/mappings.c: the process's mappings ---- */

int mappings__write_all(struct writer *w, pid_t pid);
/* Read /proc/self/maps for the file starting now (its records, its objects' file names). */
void mappings__load(void);
/* The file mapped executable at addr (symbolic links resolved) in that reading; false if none. */
bool mappings__file_at(uintptr_t addr, char *out, size_t cap);
int mappings__write_kernel(struct writer *w);

/* ---- session/samplers.c: starting and stopping the sampling of threads ---- */

int samplers__start(void);
int samplers__attach(pid_t tid);
void samplers__attach_others(void);
void samplers__stop_self(void);
int samplers__stop_all(void);
void samplers__flush_all(struct ap_stats *sum);
void samplers__arm_self(bool armed);
pid_t samplers__tid_of(pthread_t handle);
void samplers__rename(pid_t tid, const char *name);
void samplers__warn_once(int err);
/* libunwind set up now: a live stack's walk may come (samplers.c). Not async-signal-safe. */
void samplers__need_unwinder(void);

/* ---- session/process_events.c: deadly signals, a taken signal, seccomp ---- */

void process_events__stop_all_emergency(void);
void process_events__reroute(int signo);
void process_events__reroute_thread(struct ap_thread *t, int signo);
void process_events__before_seccomp(bool all_threads);
bool process_events__sandboxed(void);

/* ---- session/image_counters.c: this image's counters ---- */

/* Take over the launcher's counters or open ours; 0 or -EINVAL (said). Not async-signal-safe. */
int image_counters__start(struct ap_counters *cs, const struct ap_config *cfg);
/* Close the counters (said once) when their fds take numbers the program can open. */
void image_counters__drop_costly(struct ap_counters *cs);
/* Read them (closing them at the very end) into the file's stat records; the time they ran. */
uint64_t image_counters__save(bool close_them);
/* Sampling was paused or resumed at @now, after the state that began at @since:
 * the counters follow. Async-signal-safe. */
void image_counters__follow(bool paused, uint64_t now, uint64_t since);

/* ---- session/probe_cache.c: a missing hardware event, probed once per run ---- */

/* perf_event__probe(attr), or the refusal the run's first process found for
 * the same attr (AUTOPROF_PROBED). 0 or -errno. Not async-signal-safe. */
int probe_cache__probe(const struct perf_event_attr *attr);
/* The run's first process: hand the refusal it found to its descendants. */
void probe_cache__export(void);

/* ---- session/summary.c: the closing lines ---- */

void summary__say_signals(void);
void summary__say(void);

/* ---- session/child_env.c: the environment handed to descendants ---- */

/* The strings area of child_env__for_exec(): our AUTOPROF_* values, then LD_PRELOAD's. */
#define CHILD_ENV_STRINGS 16384
/* The longest entry an exec takes (the kernel's MAX_ARG_STRLEN, 32 pages). */
#define CHILD_ENV_ENTRY_MAX (32 * 4096)

void child_env__init(void);
void child_env__drop_preload(void);
/* The bytes of child_env__for_exec()'s strings area for envp: the LD_PRELOAD it composes
 * whole (at most CHILD_ENV_ENTRY_MAX) and the rest. Allocates nothing (vfork children). */
size_t child_env__strings_len(char *const *envp);
char **child_env__for_exec(char *const *envp, char **store, size_t store_len, char *strings,
			   size_t strings_len, bool same_process);
size_t child_env__count(char *const *envp);

/* ---- wrap/signals.c: sharing signals with the program ---- */

void signals__init(void);
void signals__block_sampling(sigset_t *old);
int signals__hold(int sig, int who, const struct sigaction *ours);
/* signals__hold() for each of sigs[0..n), taking the table once; failures are left as they are. */
void signals__hold_all(const int *sigs, int n, int who, const struct sigaction *ours);
void signals__release(int sig);
int signals__sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int signals__sigmask(int how, const sigset_t *set, sigset_t *old);

/* ---- wrap/signal_masks.c: the program's masks and waits ---- */

void signal_masks__adopt(int signo);
/* The calling thread's shadow bit (ap_shadow_signo), for a thread it creates (threads.c). */
int signal_masks__shadow(void);
void signal_masks__set_shadow(int signo);
void signal_masks__before_exec(sigset_t *saved);
void signal_masks__exec_failed(const sigset_t *saved);

/* ---- session/handlers.c: installing the sampling and the deadly signals' handlers ---- */

int handlers__install_sample(int signo);
void handlers__uninstall_sample(void);
void handlers__install_fatal(void);
void handlers__take_fatal(int sig);
bool handlers__fatal_for(int sig, struct sigaction *sa);

/* ---- wrap/fds.c: the program's descriptors and ours ---- */

/* At start, where libunwind is set up later: a pipe kept high for it. Not async-signal-safe. */
void fds__keep_unwinder_pipe(void);

/* ---- wrap/threads.c: pthread_create, pthread_setname_np, prctl ---- */

void threads__init(void);

/* ---- session/cost.c: AUTOPROF_COST, the handler's phases timed ---- */

bool cost__wanted(void);
void cost__say(const struct ap_stats *s);

/* ---- session/file_features.c: the header's feature sections ---- */

int file_features__early(struct writer *w);
int file_features__write(struct writer *w);
int file_features__write_emergency(struct writer *w);

/* ---- session/extra_events.c, offcpu.c: more attrs, off-CPU time ---- */

int extra_events__file_events(struct writer_event *events, int n);
void offcpu__file_attr(struct perf_event_attr *attr);
void offcpu__thread_start(struct ap_thread *t, pid_t tid);
int offcpu__open_event(struct ap_thread *t);
void offcpu__close_event(struct ap_thread *t);
void offcpu__end(uint64_t since, const void *leaf);

/*
 * Where a blocking call's switch records will begin in the calling thread's
 * ring, plus one; 0 when off-CPU time is not recorded on this thread. The
 * wrappers' fast path: two loads.
 */
static inline uint64_t offcpu__begin(void)
{
	struct ap_thread *t = ap_self;

	return t && t->off_ring.page
		   ? __atomic_load_n(&t->off_ring.page->data_head, __ATOMIC_ACQUIRE) + 1
		   : 0;
}

/* ---- session/stat_records.c: the counter totals, in FILE.stat and on stderr ---- */

int stat_records__write(struct writer *w, const struct ap_counters *cs, int first_id,
			uint64_t elapsed);
void stat_records__print(const struct ap_counters *cs, uint64_t elapsed_ns);
void stat_records__remove(const struct writer *w);

/* ---- session/control.c: `autoprof ctl PID start|stop|dump|status` ---- */

/* This user's directory of endpoints (made 0700 if need be; refused if not
 * the user's own, or open to others). Returns 0 or -errno. */
int control__dir(char *out, size_t cap);
void control__publish(void);
void control__withdraw(void);

/* ---- session/gocheck.c: a runtime that owns signals and threads ---- */

/* Is this a Go program without cgo (raw signals and clones: not sampled from inside)? */
bool gocheck__runtime_owned(void);

/* ---- session/lifecycle.c: the one session of this process ---- */

struct ap_session {
	const struct ap_settled *cfg; /* settled once at start (settle.h), never edited */
	/* The sampling signal now: cfg->signo until the program takes it and
	 * sampling moves (wrap/signals.c). Atomic. */
	int signo;
	struct ap_counters counters;
	struct writer writer;
	pid_t pid;
	bool active;
	bool top;	      /* the first process of the run */
	int gen;	      /* how many execs this process made before this image */
	bool execd;	      /* this image was started by an exec of a profiled image */
	bool exec_pending;    /* finished for an exec that may still fail */
	bool exec_inside;     /* ...from a handler that interrupted the profiler on this thread */
	bool exec_window;     /* between an exec's stand-down and its failure: new threads sample
			       * (they go on with the others if it fails); atomic */
	bool exec_restart;    /* a failed exec's new file being opened: new threads wait; atomic */
	bool exec_keeps_name; /* that image was empty: the next one takes its name */
	bool file_left;	      /* ...and its finished file stays there until the next replaces it */
	bool replace_file;    /* this image's file replaces the one left at its name */
	uint64_t start_time;
	struct ap_stats stats;	   /* this image's totals, folded from its threads */
	struct ap_sampler sampler; /* what its threads' handlers read */
	/* Sampling paused (AUTOPROF_START=0, `autoprof ctl PID stop`: changed by
	 * handler/control_request.c through the registered image); when it last
	 * changed, and the sampling time before that (ns). Atomic. */
	bool paused;
	uint64_t state_since, sampled_ns;
	uint64_t on_since;  /* when sampling last went on (0: never in this image) */
	uint64_t off_since; /* when it last went off (0: never) */
};

extern struct ap_session autoprof;

/* ---- session/image_name.c: where an image's file goes (0 or -ENAMETOOLONG / -errno) ---- */

/* This image's file's name: the output pattern expanded, .PID and .GEN added by the rules. */
int image_name__path(char *out, size_t cap);
/* Where it is written first: path, or beside it when it replaces the file left there. */
int image_name__first_path(const char *path, char *out, size_t cap);
/* The finished file written beside path takes its place (one rename). */
int image_name__replace_left(const char *path);
/* Say why the image's first records (which make its file) were not written: err. */
void image_name__say_unwritten(const char *path, const char *fresh, int err);

/* ---- session/exec_window.c: one ending of this image (an exec, an exit) at a time ---- */

/* Enter (waiting for another thread's ending, unless inside: interrupted inside the profiler);
 * paired with exec_window__leave(). Not async-signal-safe. */
void exec_window__enter(bool inside);
void exec_window__leave(void);
/* In a forked child: the window open. */
void exec_window__after_fork(void);

int lifecycle__start(void);
void lifecycle__stop(void);
void lifecycle__before_exec(void);
bool lifecycle__exec_finishes(void);
void lifecycle__exec_failed(void);
int lifecycle__next_gen(void);
bool lifecycle__file_left(void);

/* session/lifecycle.c: finish the file from a deadly signal's handler (registered with
 * fatal__set_stop). Async-signal-safe. */
void lifecycle__emergency_stop(void);

#endif /* AUTOPROF_PRELOAD_INTERNAL_H */
