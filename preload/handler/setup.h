/* SPDX-License-Identifier: MIT */
/*
 * setup.h - what the session calls in handler/ outside any handler: setting
 * up and tearing down the state the handlers read. None of it is
 * async-signal-safe unless its comment says so; handler.h declares what
 * runs in the handlers.
 */
#ifndef AUTOPROF_HANDLER_SETUP_H
#define AUTOPROF_HANDLER_SETUP_H

#include "handler.h"

/* glibc's registration under an object: __cxa_finalize(dso) unregisters that object's. */
extern int __register_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void),
			     void *dso);

/*
 * pthread_atfork for the library's handlers, registered under no object. Under our object,
 * glibc's exit would unregister them in our finalization (our __cxa_finalize, in _dl_fini)
 * while the program's other threads may still fork: a fork whose prepare took our lock lost
 * the parent handler that releases it (the next fork hung), and a list changing under a fork
 * aborted in glibc ("array index 1 not less than array length 0"). Handlers of no object stay
 * to the end, so each must still be right after the session stopped. 0 or an errno.
 */
static inline int ap_atfork(void (*prepare)(void), void (*parent)(void), void (*child)(void))
{
	return __register_atfork(prepare, parent, child, NULL);
}

/* ---- writer.c: the perf.data file ---- */

/* Create path (0600, never through a symlink, an existing file moved to .old) and write the
 * header, the attrs and their ids (events[0]: the sampling event); with defer, made only at the
 * first append after writer__staging(false) (the appends before it kept). 0 or -errno. */
int writer__open(struct writer *w, const char *path, const struct writer_event *events, int n,
		 bool defer);
/* A deferred writer's appends kept in memory from now on (its start, its end: the finish makes
 * the file, a discard drops them), or not (the next append makes the file). */
void writer__staging(struct writer *w, bool on);
/* Is the writer's file on disk (made by this writer)? */
bool writer__created(const struct writer *w);
/* Make feat the features written after the data from now on (written now with now, else by the
 * next append or the finish); the ones they replace (the caller frees them), or feat itself
 * when the lock could not be had. */
const struct writer_features *writer__set_features(struct writer *w,
						   const struct writer_features *feat, bool now);
/* Seal the file and close it, writing nothing more (it is about to be removed). */
void writer__discard(struct writer *w);
/* Close the file as it is (a forked child dropping its parent's writer). */
void writer__abandon(struct writer *w);
/* Open a finished file again to append more data (an exec that failed). 0 or -errno. */
int writer__reopen(struct writer *w);
/* Write events[i]'s attr again (its period, learned at the end). 0 or -errno. */
int writer__update_attr(struct writer *w, int i);
/* Give the file another fd, the lowest free one at or above min (the program wants its
 * number). The new fd or -errno. */
int writer__move_fd(struct writer *w, int min);

/* ---- chain.c ---- */

/* At start: the main thread's stack, which handlers may walk live (chain.c). */
void chain__set_main_stack(void);

/* ---- unwind.c: libunwind, set up before the first signal ---- */

/* One-time set-up for cfg's walks: the fast-trace tables, libunwind's own init where it may
 * be needed at once (paused: the start is; else left to a thread that needs it). Returns 0. */
int unwind__init(const struct ap_settled *cfg, bool paused);
/* libunwind is set up (a thread primed it): a handler may walk with it. Async-signal-safe. */
bool unwind__ready(void);
/* Run one unwind on the calling thread: libunwind's lazy, locking initialisation done (and its
 * fast-trace table made, where unwind__init was told so). */
void unwind__prime_thread(void);
/* Make the calling thread's fast-trace table now (its sampler is a signal per sample). */
void unwind__prime_trace(void);
/* Samples not unwound because they landed in the loader, an unwinder or this library. */
uint64_t unwind__skipped_in_text(void);
/* The fast trace of the calling thread from here, in the program's context with every signal
 * blocked (session/memory.c): entries in trace, *bias to make a caller's entry its return
 * address. The entries, 0 while a dlclose unmaps or where the fast trace is unusable. */
int unwind__trace_here(void **trace, int max, uintptr_t *bias);
/* libunwind's fast trace from here, in the program's context: the entries, 0 where it is not
 * set up. */
int unwind__backtrace(void **trace, int max);
/* Drop libunwind's cached frame layouts (an object was unloaded), where it is set up. */
void unwind__flush_cache(void);

/* ---- signal_delivery.c: what it counted, for the closing lines ---- */

/* The SIGIOs of ours dropped. */
unsigned long signal_delivery__stray_sigios(void);
/* The threads that stepped aside for the program's own sampling signal, and its number. */
unsigned long signal_delivery__stepped_aside(int *signo);

/* ---- registry.c: every sampled thread ---- */

/* Put t in the registry, the lock held (registry__lock()). Returns 0 or -errno. */
int registry__add(struct ap_thread *t);
/* Take t out again (its start failed), the lock held. */
void registry__drop(struct ap_thread *t);
/* The lock held to claim a thread or go over the table in order. */
void registry__lock(void);
void registry__unlock(void);
/* Try the lock only (the emergency stop: the interrupted code may hold it): glibc's
 * pthread_mutex_trylock on a normal mutex is one compare-and-swap, it never waits. */
bool registry__trylock(void);
/* pthread_atfork: no thread holds the registry across fork. */
void registry__atfork_prepare(void);
void registry__atfork_parent(void);
/* Does the calling thread hold the registry or wait for it: inside fork() (between the two
 * above), or in the library's own hold? Async-signal-safe. */
bool registry__held_here(void);
/* In a forked child: the parent's threads, forgotten unwritten. */
void registry__forget_all(void);

/* ---- objects.c: the loaded objects, read without the loader's lock ---- */

/* Find the real loader functions and fill the table, once. */
void objects__init(void);
/* Enter the objects loaded since into the table (libunwind, as unwind_lib.c loads it); for
 * a new file (new_file), every object now loaded counts as written to it. */
void objects__refresh(bool new_file);
/* object_records.c: the records of the objects loaded since (libunwind's) written to w's file
 * now (staged where it is not made yet), not with a thread's last samples. */
void object_records__write_loaded(struct writer *w, pid_t pid, int signo);
/* writer.c: writer__append, kept with the staged records where the file is not made yet. */
int writer__append_staged(struct writer *w, const void *buf, size_t len);
/* Samples whose stack or records were skipped because a dlclose was in progress. */
uint64_t objects__skipped_busy(void);
/* The build id of the object mapped at addr, into id (20 bytes); its size, 0 if unknown. */
unsigned objects__build_id(uintptr_t addr, uint8_t *id);
/* Around the real dlclose: readers kept out, the records of what may be unloaded written
 * into w first (NULL: this process is not profiled), what was unloaded dropped. */
void objects__before_dlclose(struct writer *w, pid_t pid, int signo);
void objects__after_dlclose(void);

/* ---- cputimer.c: the fallback sample source, a CPU-time timer per thread ---- */

/* Create the calling thread's timer for t (t->sampler set), not armed yet. 0 or -errno. */
int cputimer__open(struct ap_thread *t);
/* Arm the calling thread's timer; its next sample's period counts from now. 0 or -errno. */
int cputimer__start(struct ap_thread *t);
/* Delete t's timer (a system call: the emergency stop's too, async-signal-safe). */
void cputimer__close(struct ap_thread *t);
/* Replace t's timer by one that sends the current sampling signal (from another thread). */
void cputimer__retarget(struct ap_thread *t);

/* ---- perf_event.c: the per-thread sampling event ---- */

struct ap_settled;
/* Fill attr with the kernel event each thread opens for cfg. Returns 0. */
int perf_event__sampler_attr(const struct ap_settled *cfg, struct perf_event_attr *attr);
/* Whether cfg's samples are batched (stack copies, a tick event that drains them). */
bool perf_event__batched(const struct ap_settled *cfg);
/* How many samples a batched thread's tick spans once ramped up. */
unsigned perf_event__tick_samples(const struct ap_settled *cfg);
/* Can the calling thread open attr? The event is closed again. 0 or -errno. */
int perf_event__probe(const struct perf_event_attr *attr);
/* The highest sample_freq the kernel accepts, or 0 when unknown. */
int perf_event__max_sample_rate(void);

/* ---- sampler_events.c: a sampled thread's perf events ---- */

/* Give t a new event that signals with signo (the program took the old number): t's handler
 * held off meanwhile. Caller holds the registry lock. */
void sampler_events__reopen(struct ap_thread *t, int signo);

/* ---- image.c: the image as its handlers see it ---- */

/* Register what the handlers may read and call of the image (copied), before the
 * sampling handler is installed. */
void image__register(const struct ap_image *img);

/* ---- control_request.c: the answering side of `autoprof ctl` ---- */

/* The reply file and its temporary next to the endpoint (session/control.c), before the
 * token that makes requests valid is set. */
void control_request__set_reply(const char *endpoint);
/* The request's token: 0 (none valid) or the endpoint's. set and token are atomic; take
 * (0 from now on, the old one returned) is async-signal-safe. */
void control_request__set_token(uint32_t tok);
uint32_t control_request__token(void);
uint32_t control_request__take_token(void);
/* The reply file's path (for the endpoint's removal). Async-signal-safe. */
const char *control_request__reply(void);
/* Was a reply written to it by this process? Async-signal-safe. */
bool control_request__replied(void);

/* ---- windows.c: AUTOPROF_WINDOW ---- */

/* The first window's path for an image whose file would be path (the windows of cfg set
 * up). 0 or -ENAMETOOLONG. */
int windows__first_path(const struct ap_settled *cfg, char *path, size_t cap);
/* Keep a copy of the records the image's file starts with, for every window's file. */
void windows__save_prologue(const struct writer *w);

/* ---- signal_table.c: what wrap/signals.c's wrappers change in it ---- */

/* Take the table (every signal blocked on this thread, the old mask in *old, then its lock);
 * give it back. Async-signal-safe: a program may call sigaction from its handlers. */
void signal_table__enter(sigset_t *old);
void signal_table__leave(const sigset_t *old);
/* sig's virtual disposition, and who holds sig from now on: between enter and leave. */
struct sigaction *signal_table__virt(int sig);
void signal_table__set_holder(int sig, int who);
/* Remember that sig carries samples (its POLL_* deliveries are ours). */
void signal_table__note_sampling(int sig);
/* Register libc's sigaction for the handlers (wrap/signals.c finds it). */
void signal_table__set_sigaction(int (*fn)(int, const struct sigaction *, struct sigaction *));

#endif /* AUTOPROF_HANDLER_SETUP_H */
