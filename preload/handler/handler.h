/* SPDX-License-Identifier: MIT */
/*
 * handler.h - the handler layer: everything that runs inside the sampling
 * signal's handler (on_signal.c) or a deadly signal's (fatal.c). Every
 * function declared here is async-signal-safe: no malloc, no stdio, no lock
 * the interrupted program could hold (ours are tried, or spun on with a
 * bound), no cancellation point; the handlers leave errno as they found it.
 * "System calls only" on a declaration means just that (raw_syscall, or libc's
 * plain wrappers named there). The handler reads its thread's state (struct
 * ap_thread), through it a read-only description of what to sample (struct
 * ap_sampler, and the settled configuration: settled.h), and the image as
 * the session registered it before installing the handler (struct ap_image);
 * it never reads the session (internal.h) nor calls into it by name: what it
 * may call of the session is registered (fatal__set_stop, ap_image's
 * snapshot). tests/layers.t checks that with nm. What the session calls in
 * handler/ outside any handler is in setup.h. Of the rest of the tree it
 * uses only common/'s raw system calls (common.h: raw_syscall, log__say_once, the fd
 * table of fdtab.c, raw_syscall__read_file, window_stamp__utc).
 *
 *   on_signal.c  the sampling handler: our sample, or the program's signal?
 *   chain.c      each sample's call chain (drain.h: one drain's state)
 *   ring.c       the perf ring buffer, drained record by record
 *   unwind.c     the interrupted user stack, with libunwind
 *   cfi.c        a batched sample's stack copy, unwound with .eh_frame rules
 *   eh_frame.c   the rule of one pc, read from .eh_frame (eh_frame.h)
 *   record.c     the records we write (SAMPLE, COMM, MMAP2, LOST, ...)
 *   buffer.c     the thread's record buffer: reserve, flush
 *   aggregate.c  a thread's samples merged by stack (AUTOPROF_AGGREGATE)
 *   writer.c     the perf.data file: appends that keep it valid at every flush
 *                (writer_parts.h: writer_fd.c its fd, writer_lock.c one
 *                write at a time, writer_helper.c writes in a helper process)
 *   own_stack.c  the handler's work on a stack of ours
 *   fatal.c      a deadly signal: finish the file, die as the program would
 *   signal_delivery.c  a held signal that is not a sample: the program's disposition
 *   signal_table.c     the signals we hold, as the program sees them (wrap/signals.c
 *                      writes it: setup.h)
 *   objects.c    the loaded objects, read without the loader's lock (objects.h:
 *                object_notes.c their notes, object_records.c their MMAP2 records)
 *   sampler_events.c  a sampled thread's events: opened, replaced from its handler
 *   perf_event.c a thread's sampling event: its attr, opened, its signal routed
 *   cputimer.c   the fallback sample source: a CPU-time timer per thread
 *   image.c      the image as the handlers see it (registered by the session)
 *   control_request.c  a request of `autoprof ctl` (session/control.c: its endpoint)
 *   windows.c    AUTOPROF_WINDOW: a window's end, its new file
 *   registry.c   every sampled thread (set-up in setup.h: what the session calls
 *                in handler/ outside any handler)
 *   clock.h      the clocks (ap_now: every timestamp in the file)
 */
#ifndef AUTOPROF_HANDLER_H
#define AUTOPROF_HANDLER_H

#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "autoprof/perf_file.h"
#include "clock.h"
#include "common.h"

#define AP_TLS __thread __attribute__((tls_model("initial-exec")))

/* The id every record of the sampling event carries (ids are labels only). */
#define AP_SAMPLE_ID 1

/* ---- what a thread, and then a whole image, sampled ---- */

struct ap_stats {
	uint64_t samples, lost, throttles, period_sum;
	uint64_t unwind_skipped; /* no stack: not unwindable there, or the unwind failed */
	uint64_t unwind_short;	 /* no stack: drained without its signal context */
	uint64_t unwinds, unwind_ns, frames; /* unwind cost, measured when verbose */
	uint64_t unwind_slow;		     /* unwinds by DWARF steps, not the fast trace */
	uint64_t own_only; /* samples whose every user frame was the profiler's: left out */
	uint64_t threads;  /* (folded totals only) threads that sampled */
	uint64_t first_time, last_time;	  /* the samples' time range */
	uint64_t offcpu_waits, offcpu_ns; /* AUTOPROF_OFFCPU: waits recorded, their ns */
	uint64_t offcpu_short,
	    offcpu_elsewhere; /* ns of waits too short to place, or not in a call we wrap */
	/* AUTOPROF_COST: the handler's phases, CLOCK_MONOTONIC ns (struct ap_cost order) */
	uint64_t cost[8];
	uint64_t slowdowns; /* the thread's rate was halved (on_signal.c's backoff) */
	uint64_t copied;    /* batched: stack bytes the kernel copied, summed over the samples */
	uint64_t copy_end;  /* batched: the copy a thread's event asked for at its end, summed */
	uint64_t agg_full;  /* AUTOPROF_AGGREGATE: its table written early, being full */
};

/* The phases AUTOPROF_COST times (indexes into ap_stats.cost). */
enum ap_cost {
	AP_COST_HANDLERS, /* handler runs that drained */
	AP_COST_DELAY,	  /* from the newest sample's time to the handler's start */
	AP_COST_HANDLER,  /* the handler, start to end */
	AP_COST_UNWIND,	  /* unwind__stack */
	AP_COST_NOTE,	  /* object_records__note: the records of objects a chain touches */
	AP_COST_RECORD,	  /* laying out the SAMPLE record */
	AP_COST_FLUSH,	  /* buffer__maybe_flush: writes to the file */
	AP_COST_SAMPLES,  /* samples timed */
};

/* *p = v where v is nonzero and below it (or *p is 0), atomically. Async-signal-safe. */
static inline void ap_atomic_min_nz(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v && (!cur || v < cur) &&
	       !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* *p = v where v is above it, atomically. Async-signal-safe. */
static inline void ap_atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur &&
	       !__atomic_compare_exchange_n(p, &cur, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/* Add a thread's counts to an image's totals (atomically: threads fold as they end). */
void buffer__fold_stats(struct ap_stats *total, const struct ap_stats *t);

/* ---- ring.c: one perf mmap ring buffer ---- */

struct ring {
	struct perf_event_mmap_page *page;
	const char *data;
	uint64_t mask; /* data_size - 1 */
	size_t map_len;
};

/* Map fd's ring with data_pages of data (0: the header page only). 0 or -errno. System
 * calls only (libc's mmap; sysconf(_SC_PAGESIZE), glibc's read of the loader's page size). */
int ring__map(struct ring *r, int fd, unsigned data_pages);
/* Unmap it (libc's munmap), which ends an event that has no fd left. */
void ring__unmap(struct ring *r);

/* Each record: rec a contiguous copy (or in the ring); last_sample: the newest SAMPLE. */
typedef void (*ring_record_fn)(void *ctx, const struct perf_event_header *rec, bool last_sample);
/* Hand every record to fn, then release the space (one that wraps is copied to scratch). */
void ring__drain(struct ring *r, char *scratch, size_t scratch_len, ring_record_fn fn, void *ctx);
/* Are there records to drain? */
bool ring__pending(const struct ring *r);

/* ---- unwind.c: user stacks with libunwind ---- */

/* The interrupted stack of ucontext into ips (at most max; the raw trace in trace, *slow: the
 * DWARF walk was needed): how many, at least 1, or 0 when it must not be unwound. Only from
 * the sampling handler (libunwind's conditions: unwind.c's file comment). */
int unwind__stack(void *ucontext, uint64_t *ips, int max, void **trace, int trace_max, bool *slow);
/* Is pc in libunwind's own code? In libunwind's or this library's? */
bool unwind__owns_pc(uintptr_t pc);
bool unwind__is_profiler_pc(uintptr_t pc);
/* Is this thread unwinding from inside the sampling handler? */
bool unwind__in_handler(void);
/* The interrupted pc, sp, frame pointer, and signal return trampoline (0: not on the stack)
 * of ucontext. */
uint64_t unwind__pc(void *ucontext);
uint64_t unwind__sp(void *ucontext);
uint64_t unwind__bp(void *ucontext);
uint64_t unwind__restorer(void *ucontext);

/* ---- cfi.c: a batched sample's stack copy, unwound with .eh_frame ---- */

/* How a walk of cfi__unwind() ended. */
struct cfi_walk {
	bool complete;	       /* at the outermost frame, or as deep as asked */
	bool ran_out;	       /* at the copy's end */
	int signal_at;	       /* the first signal frame crossed: its interrupted pc's index */
	uint64_t signal_uc;    /* ... the address of its ucontext (0: none crossed) */
	uint64_t signal_sp;    /* ... and the interrupted sp */
	uint64_t signal_reach; /* ... and the bytes of the copy up to its registers */
	uint64_t reach;	       /* bytes of the copy the walk needed, from its start */
	uint64_t need;	       /* ran_out: the bytes of copy its next read needed */
};

int cfi__unwind(void *cache, uint64_t ip, uint64_t sp, uint64_t bp, const void *copy, uint64_t size,
		uint64_t *ips, int max, struct cfi_walk *w);

/* ---- writer.c: the perf.data file ---- */

/* One attr of the file: the sampling event first, then the counters. */
#define AP_MAX_EVENTS 24
struct writer_event {
	struct perf_event_attr attr;
	uint64_t id;
	char name[64];
};

/*
 * The feature sections, laid out once (session/file_features.c) and written by the writer
 * after the data at every flush: bodies in one block, each at rel[i], the
 * SAMPLE_TIME body's two u64 at sample_time (filled in at each write).
 */
#define AP_MAX_FEATURES 24
struct writer_features {
	char *body;
	size_t len;
	int n;
	size_t rel[AP_MAX_FEATURES], size[AP_MAX_FEATURES];
	size_t sample_time; /* SIZE_MAX: none */
	uint64_t bits[PERF_FEAT_BITS / 64];
};

struct writer {
	int fd;		/* -1 between writes when transient */
	bool transient; /* keeps no fd: opened by path for each write (writer.c) */
	char path[PATH_MAX];
	uint64_t dev, ino; /* the file's identity, checked before each write */
	uint64_t data_offset;
	uint64_t end;			    /* end of the data on disk (under lock) */
	int lock;			    /* tid of the thread writing the file, or 0; atomic */
	bool sealed;			    /* no more data (under lock) */
	bool tail_on_disk;		    /* features are flagged in the header (under lock) */
	int error;			    /* first write error (positive errno); atomic */
	uint64_t first_time, last_time;	    /* the samples' time range; atomic */
	const struct writer_features *feat; /* what follows the data; under lock */
	struct writer_event events[AP_MAX_EVENTS]; /* as written to the file */
	int nr_events;
	/* Deferred: made at the first append (with defer, after writer__staging(false), those
	 * before kept in staged; under lock); making: by a helper; unnamed: not named yet. */
	bool deferred, staging, making, unnamed;
	char *staged;
	size_t staged_len, staged_cap;
};

/* Append whole records (the features after them), from several threads at once, never from
 * inside writer__append on the same thread. 0 or -errno (dropped, the first error kept). */
int writer__append(struct writer *w, const void *buf, size_t len);
/* The same, saying where in the file the bytes went; and rewriting them there later. */
int writer__append_at(struct writer *w, const void *buf, size_t len, uint64_t *at);
int writer__patch(struct writer *w, uint64_t at, const void *buf, size_t len);
/* Widen the sample time range the features report. */
void writer__note_times(struct writer *w, uint64_t first, uint64_t last);
/* Finish the file (features, final header) and close it. Async-signal-safe when !tidy only. */
int writer__finish(struct writer *w, bool tidy);
/* An exec from a handler (which may fail, and then the code it interrupted resumes): this
 * thread's interrupted write is not taken over while on; does this thread hold w's lock? */
void writer_lock__own_write_resumes(bool on);
bool writer_lock__held_here(const struct writer *w);
/* A window's end: finish the file and go on in a new one at path, starting with first. */
int writer__rotate(struct writer *w, const char *path, const void *first, size_t first_len);

/* ---- record.c: building the records we write ---- */

size_t record__sample(void *buf, size_t cap, bool kernel, uint64_t ip, uint32_t pid, uint32_t tid,
		      uint64_t time, uint32_t cpu, uint64_t period, const uint64_t *chain,
		      unsigned nr);
size_t record__comm(void *buf, size_t cap, uint32_t pid, uint32_t tid, const char *comm,
		    uint64_t time, bool exec);
size_t record__mmap2(void *buf, size_t cap, uint32_t pid, uint64_t start, uint64_t len,
		     uint64_t pgoff, uint32_t maj, uint32_t min, uint64_t ino, uint32_t prot,
		     uint32_t flags, const char *filename, uint64_t time, const uint8_t *build_id,
		     unsigned build_id_size);
size_t record__kernel_mmap(void *buf, size_t cap, uint64_t start, uint64_t len);
size_t record__lost(void *buf, size_t cap, uint32_t pid, uint32_t tid, uint64_t time,
		    uint64_t lost);
size_t record__throttle(void *buf, size_t cap, uint32_t type, uint32_t pid, uint32_t tid,
			uint64_t time);

/* ---- on_signal.c: what each thread's handler samples ---- */

/*
 * What to sample, the same for every thread of an image: filled by the
 * session before any thread samples (and again in a forked child before its
 * thread does), read-only while any handler can run.
 */
struct ap_settled;

struct ap_sampler {
	struct writer *writer;	     /* where flushed records go */
	uint64_t sample_type;	     /* of the kernel event: the fields a SAMPLE holds */
	enum ap_callgraph callgraph; /* how user stacks are taken */
	unsigned stack_depth;	     /* deepest chain kept */
	uint32_t pid;		     /* the image's process */
	bool measure_unwind;	     /* AUTOPROF_VERBOSE: time each unwind */
	bool aggregate;		     /* AUTOPROF_AGGREGATE: samples merge in t->agg */
	uint64_t check_id;     /* AUTOPROF_AGGREGATE_CHECK: the id of the merged copies, or 0 */
	uint64_t offcpu_id;    /* AUTOPROF_OFFCPU: the id of offcpu-time, or 0 */
	bool measure_cost;     /* AUTOPROF_COST: time the handler's phases */
	bool batched;	       /* samples carry registers and a stack copy (cfi.c) */
	unsigned tick_samples; /* batched: the samples a thread's tick spans */
	/* What a thread's events are opened with, from its handler too (sampler_events.c): */
	const struct ap_settled *cfg; /* the settled configuration (settled.h), const */
	const int *signo;	      /* the sampling signal now (it moves when the program
				       * takes it: wrap/signals.c); atomic */
};

/* The user registers a batched sample carries (x86-64 perf_regs: bp, sp, ip), in this order. */
#define AP_BATCH_REGS	  ((1ULL << 6) | (1ULL << 7) | (1ULL << 8))
#define AP_MAX_STACK_COPY 60000 /* AUTOPROF_STACK_COPY's limit: a record is at most 64 KB */

struct ap_thread {
	pid_t tid;
	int fd;	  /* the number the event had when its signal was routed (the si_fd of
		   * its signals); closed since: a thread holds no fd */
	int slot; /* in the registry */
	struct ring ring;
	struct ring tick; /* batched: the event whose signal drains ring (no data pages) */
	char *buf;	  /* records waiting for writer__append */
	size_t len, cap;
	char *scratch; /* a ring record that wraps, copied out */
	uint64_t last_flush;
	struct ap_stats stats;
	const struct ap_sampler *sampler; /* read-only while the thread samples */
	char *stack_top;		  /* of the handler's own stack (own_stack.c) */
	void *mem; /* one mapping holds this struct, buf, scratch and the handler's stack */
	size_t mem_len;
	pthread_t handle;      /* 0 for threads attached from outside */
	bool is_timer;	       /* sampled by a CPU-time timer (cputimer.c), not a perf event */
	bool batched;	       /* its samples carry stack copies; a tick event signals (cfi.c) */
	unsigned copy_bytes;   /* batched: the stack copy its event asks for */
	unsigned copy_max;     /* ... the largest it may grow to at its rate */
	unsigned copy_samples; /* batched samples since the copy size was set */
	unsigned copy_short;   /* ... whose walk ran off the end of the copy */
	unsigned copy_reach;   /* ... the most bytes of a copy one of their walks needed, */
	unsigned copy_window;  /* ... in the copy_window walks since it was last reset */
	unsigned copy_shrunk_from; /* ... the copy before it shrank (0: none): a walk run off
				      restores it */
	bool copy_fixed;      /* ... its copies grew back after a shrink: they shrink no more */
	unsigned tick_batch;  /* batched: the samples its tick spans (sampler_events.c) */
	struct ring ramp;     /* batched: a tick at every sample for its first drains, or none */
	int ramp_fd;	      /* ... the number its signals carry in si_fd, or -1 */
	unsigned ramp_drains; /* ... the drains since it started or the copy last grew */
	timer_t timer;
	uint64_t last_cpu;    /* thread CPU time at the last timer sample */
	int closed;	      /* set once by whoever stops the thread */
	int in_handler;	      /* held: 1 by the thread itself, 2 by a visitor (registry__grab) */
	struct ap_agg *agg;   /* merged samples (aggregate.c), in mem; NULL when not merging */
	struct ring off_ring; /* AUTOPROF_OFFCPU: the switch event's (session/offcpu.c), or none */
	uint64_t off_out;     /* when the thread last left the CPU to wait, or 0 */
	/* The program's stack below the handler's last run (on_signal.c), for its
	 * samples that are drained at the next signal: kept_n frames in
	 * AP_PROG(t, kept), for samples taken in [kept_from, kept_to] or walked
	 * through the signal frame that interrupted kept_sp and kept_pc; kept_n 0
	 * when none. Written by the thread's handler, read by its drains. */
	int kept, kept_n;
	uint64_t kept_from, kept_to, kept_restorer, kept_sp, kept_pc;
	/* The backoff (on_signal.c's pace()): the thread samples at its rate
	 * halved rate_shift times; the current window's start (monotonic), the
	 * thread's CPU and system time then, its handlers' CPU time since
	 * (estimated from 1 run in 1-4: pace_stride), and its handler runs. */
	unsigned rate_shift;
	uint64_t win_start, win_cpu, win_sys, win_user, win_busy, win_runs;
	unsigned win_n; /* its windows judged */
};

/*
 * Per-thread scratch: a ring record that wraps, then the call chain being
 * built, then the raw trace it is cut from (the handler's own frames first).
 */
#define AP_MAX_CHAIN	   1024 /* AUTOPROF_STACK_DEPTH's limit */
#define AP_HANDLER_FRAMES  64	/* room for the frames from the handler to the interrupted one */
#define AP_RING_COPY_BYTES (65536 + 1024) /* the largest record */
#define AP_CHAIN_BYTES	   ((AP_MAX_CHAIN + 2) * 8)
#define AP_TRACE_ENTRIES   (AP_MAX_CHAIN + AP_HANDLER_FRAMES)
#define AP_CFI_ENTRIES	   1024			     /* cfi.c's per-thread rule cache: */
#define AP_CFI_BYTES	   (8 + AP_CFI_ENTRIES * 24) /* a generation, then the entries */
#define AP_PROG_BYTES	   (2 * AP_MAX_CHAIN * 8)    /* two program stacks (on_signal.c) */
#define AP_SCRATCH_BYTES                                                                           \
	(AP_RING_COPY_BYTES + AP_CHAIN_BYTES + AP_TRACE_ENTRIES * 8 + AP_PROG_BYTES + AP_CFI_BYTES)
#define AP_CFI_CACHE(t) ((t)->scratch + AP_SCRATCH_BYTES - AP_CFI_BYTES)
/* Program stack i (0 or 1) of t: where a handler keeps the stack it interrupted. */
#define AP_PROG(t, i)                                                                              \
	((uint64_t *)((t)->scratch + AP_SCRATCH_BYTES - AP_CFI_BYTES - AP_PROG_BYTES) +            \
	 (i)*AP_MAX_CHAIN)

/* The calling thread's sampler (NULL: none), and whether it entered seccomp (then no system
 * call of ours on it): set by the session, read by the thread's handlers (registry.c). */
extern AP_TLS struct ap_thread *ap_self;
extern AP_TLS bool ap_sandboxed;

/* The handler of the sampling signal (installed by session/handlers.c). */
void on_signal__handle(int signo, siginfo_t *si, void *ucontext);
void on_signal__drain(struct ap_thread *t, void *ucontext);
void on_signal__from_context(struct ap_thread *t, void *ucontext, uint64_t time, uint32_t cpu,
			     uint64_t period);

/* ---- buffer.c: the thread's records, on their way to the file ---- */

/* Take t for its handler: false when it runs already (a nested signal), a visitor holds it
 * or t stops, and then the handler leaves t alone; buffer__leave gives it back. */
bool buffer__enter(struct ap_thread *t);
void buffer__leave(struct ap_thread *t);
/* Write out t's records (from its handler, or with its signal blocked). */
void buffer__flush(struct ap_thread *t);
/* Room for a record of up to len bytes at the end of t's buffer (flushed first if need be). */
char *buffer__reserve(struct ap_thread *t, size_t len);
/* After a drain: flush when half full or the flush interval has passed. */
void buffer__maybe_flush(struct ap_thread *t);

/* ---- registry.c: every sampled thread, read without a lock ---- */

/* The calling thread's sampler whose event signals with si_fd fd (attached from outside). */
struct ap_thread *registry__from_fd(int fd);
/* Take t from its handler (own: for t's own set-up); false when t stops or the wait ran out. */
bool registry__grab(struct ap_thread *t, bool own);
/* Give t back to its handler. */
void registry__release(struct ap_thread *t);
/* fn(t, arg) for every thread sampled now, each taken from its handler; how many fn saw. */
int registry__visit(void (*fn)(struct ap_thread *t, void *arg), void *arg);
/* Take t out to stop it; false if someone else did. Caller holds the lock (or tried it). */
bool registry__claim(struct ap_thread *t);
/* Wait (bounded) until t's handler is not running; true when it left. */
bool registry__wait_handler(struct ap_thread *t);
/* Wait (bounded) until no visitor goes over the registry. */
void registry__wait_visitors(void);
/* The highest slot used (-1: none), and the thread in slot i. */
int registry__top(void);
struct ap_thread *registry__at(int i);

/* ---- aggregate.c: a thread's samples merged by stack (AUTOPROF_AGGREGATE) ---- */

/* The bytes a thread's mapping needs for its table (0 when not merging). */
size_t aggregate__bytes(const struct ap_sampler *s);
/* Make an empty table in mem (len bytes from aggregate__bytes, zeroed), its window from now. */
struct ap_agg *aggregate__place(void *mem, size_t len, uint64_t now);
/* The record t's handler just built at rec: the bytes to keep (0: a SAMPLE merged). */
size_t aggregate__fold(struct ap_thread *t, void *rec, size_t len);
/* The same for a SAMPLE laid out with its period at byte at (memory records): merged only when
 * t merges (AUTOPROF_AGGREGATE without _CHECK), the time, cpu and what else lies before the
 * period left out of the key; hash: the caller's hash of the key, or 0 (the record's). */
size_t aggregate__fold_at(struct ap_thread *t, void *rec, size_t len, size_t at, uint64_t hash);
/* Append t's merged records and empty its table (on t's thread, or t held off). */
void aggregate__emit_all(struct ap_thread *t);
/* Empty t's table without writing it (a forked child's copy), its window from now. */
void aggregate__drop(struct ap_thread *t, uint64_t now);
/* Emit t's table when its window is over (now: a sample's time). */
void aggregate__maybe_emit(struct ap_thread *t, uint64_t now);

/* ---- own_stack.c ---- */

/* Call fn(arg) on the stack whose top is stack_top (16-byte aligned by it). */
void own_stack__call(void *arg, void (*fn)(void *), void *stack_top);

/* chain.c: the thread that runs our start or end (its samples are ours). Async-signal-safe. */
void chain__profiler_work(pid_t tid);

/* ---- objects.c: the loaded objects, read without the loader's lock (set-up: setup.h) ---- */

enum ap_obj_kind {
	AP_OBJ_LOADER = 1,   /* ld-linux: _dl_*, lazy binding, the loader's lock */
	AP_OBJ_UNWINDER = 2, /* libunwind: its locks and caches */
	AP_OBJ_EH = 4,	     /* libgcc_s: _Unwind_*, stacks mid-switch */
	AP_OBJ_SELF = 8,     /* this library */
};
unsigned objects__kind(uintptr_t pc);
bool objects__enter(void);
void objects__leave(void);
void objects__learn(uintptr_t pc);
void objects__skipped(void);
bool objects__eh_frame(uintptr_t pc, const uint8_t **hdr, const uint8_t **end);
uint64_t objects__generation(void);
/* The generation of the file being written (bumped when a new file starts). */
int objects__file_gen(void);
/* Whether the table is set up (objects__init ran). */
bool objects__ready(void);
/* dl_iterate_phdr() answered from the table: only while this thread unwinds in the handler. */
struct dl_phdr_info;
int objects__iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
/* A window's new file starts: every object's records go into it again. */
void objects__next_window(void);

/* ---- object_records.c: the MMAP2 records of the objects a chain touches ---- */

void object_records__note(struct ap_thread *t, const uint64_t *chain, unsigned nr);
/* ...for a caller between objects__enter() and objects__leave(). */
void object_records__note_held(struct ap_thread *t, const uint64_t *chain, unsigned nr);

/* ---- image.c: the image as its handlers see it ---- */

/*
 * What a `autoprof ctl` request and a window's end read and change of the
 * process image, from any thread's handler: registered by the session
 * (image__register, setup.h) before the sampling handler is installed; the
 * pointers stay, what they point to is the session's, read and written
 * atomically. The session's own code is reached only through snapshot.
 */
struct ap_image {
	const bool *active;	       /* the session profiles this image */
	const pid_t *pid;	       /* the image's process (a vfork child is not it) */
	struct writer *writer;	       /* the image's file */
	const struct ap_settled *cfg;  /* settled before registering, never edited */
	const struct ap_stats *totals; /* of its threads that ended (folded atomically) */
	/* Sampling paused (AUTOPROF_START=0, ctl stop), when that last changed and the
	 * sampling time before (ns): read by the session, changed by a ctl request. */
	bool *paused;
	uint64_t *state_since, *sampled_ns;
	/* The latest stretch of sampling: when it last went on and off (0: never), set by a
	 * ctl request, read by off-CPU time (session/offcpu.c). NULL: not kept. */
	uint64_t *on_since, *off_since;
	/* Sampling was paused or resumed at now after the state that began at since: the
	 * session's counters follow (NULL: none). Async-signal-safe by the session's contract
	 * (image_counters.c: ioctls). */
	void (*on_pause)(bool paused, uint64_t now, uint64_t since);
	/* AUTOPROF_MEMORY: the live set written into the file at a window's end (NULL:
	 * none). Async-signal-safe by the session's contract (memory.h). */
	void (*snapshot)(struct writer *w);
	/* AUTOPROF_MEMORY: the live set written into the file at `ctl dump` (NULL: none);
	 * a later live set in the same file retires it. Async-signal-safe (memory.h). */
	void (*dump)(struct writer *w);
};
/* The image as registered (every field NULL before). */
const struct ap_image *image__get(void);

/* ---- control_request.c: a request of `autoprof ctl` on the sampling signal ---- */

/* Is this delivery of the sampling signal a request of `autoprof ctl`? */
bool control_request__is_request(const siginfo_t *si);
/* Act on it and answer it, from the thread it landed on. */
void control_request__on_signal(const siginfo_t *si);

/* ---- windows.c: AUTOPROF_WINDOW, one file per window of time (set-up: setup.h) ---- */

/* CLOCK_MONOTONIC ns the current window ends at; 0: no windows. Atomic. */
extern uint64_t ap_window_end;
/* End the window if the time is past its end, from a handler (on_own_stack: the caller is
 * on its thread's own handler stack already). */
void windows__end(bool on_own_stack);

/* ---- sampler_events.c: a sampled thread's events (set-up: setup.h) ---- */

/* Each open: 0 or -errno, nothing left open. System calls only (ring.c's mmap, munmap too). */
int sampler_events__open_tick(struct ap_thread *t, pid_t tid, int signo, int *tick_fd);
int sampler_events__open_batched(struct ap_thread *t, pid_t tid, int *fd, int *tick_fd);
int sampler_events__open_plain(struct ap_thread *t, pid_t tid);
/* From t's handler: a larger stack copy, a lower rate (false: unchanged), the end of its ramp
 * (a tick at every sample; settle: its ring grown for its batches first, false: still ramping). */
void sampler_events__grow_copy(struct ap_thread *t);
bool sampler_events__resize_copy(struct ap_thread *t, unsigned copy);
bool sampler_events__slow_down(struct ap_thread *t);
void sampler_events__end_ramp(struct ap_thread *t);
bool sampler_events__settle_ramp(struct ap_thread *t);

/* ---- sampler_arming.c: a thread's events follow the pause, or end for good ---- */

/* Make t's events follow paused (ended, or opened again); the caller holds t. 0 or -errno. */
int sampler_arming__sync(struct ap_thread *t, bool paused);
/* The calling thread is sampled no more (the program took the signal): was it until then? */
bool sampler_arming__step_aside(void);

/* ---- perf_event.c: the thread's events, opened again from its handler (set-up: setup.h) ---- */

struct ap_settled;
/* The tick of a batched sampler for cfg: a cpu-clock event, one signal per `samples`. */
void perf_event__tick_attr(const struct ap_settled *cfg, struct perf_event_attr *attr,
			   unsigned samples);
/* The shortest tick, in ns of the thread's CPU time, and the samples a tick spans at most. */
#define AP_TICK_MIN_NS 250000ULL
unsigned perf_event__tick_span(const struct ap_settled *cfg);
/* Open attr for thread tid (0: the caller), close-on-exec: the fd or -errno. Raw system
 * calls only. */
int perf_event__open(struct perf_event_attr *attr, pid_t tid);
/* Send fd's notifications to thread tid as signal signo: 0 or -errno. Raw system calls only. */
int perf_event__route_signal(int fd, int signo, pid_t tid);

/* ---- cputimer.c: the timer source (set-up: setup.h) ---- */

/* Is this siginfo our timer's? */
bool cputimer__is_ours(const siginfo_t *si);
/* One timer sample of the calling thread, from the signal's context. */
void cputimer__sample(struct ap_thread *t, void *ucontext);
/* Arm (on) or disarm t's timer, from any thread holding t (registry__grab). 0 or -errno.
 * Raw system calls only. */
int cputimer__set_armed(struct ap_thread *t, bool on);

/* ---- signal_delivery.c: a held signal in one of our handlers ---- */

/* Is this delivery one of our samples (a late one included)? Async-signal-safe. */
bool signal_delivery__is_sample(int sig, const siginfo_t *si);
/* Is this SIGIO the kernel's, for one of our descriptors (counted, dropped)? Async-signal-safe. */
bool signal_delivery__is_our_sigio(int sig, const siginfo_t *si);
/* Give a signal that is not ours the program's disposition. Async-signal-safe. */
void signal_delivery__deliver(int sig, siginfo_t *si, void *uc);

/* ---- signal_table.c: the signals the library holds, as the program sees them ---- */

enum { AP_HOLD_NONE, AP_HOLD_SAMPLE, AP_HOLD_FATAL }; /* who holds a signal */
/* A consistent copy of sig's holder (returned) and virtual disposition. */
int signal_table__read(int sig, struct sigaction *out);
/* Who holds sig (AP_HOLD_*). */
int signal_table__holder(int sig);
/* Has sig carried samples at some time? */
bool signal_table__ever_sampled(int sig);
/* SA_RESETHAND: the handler ran once; sig's virtual disposition becomes SIG_DFL. */
void signal_table__reset_handler(int sig, sighandler_t ran);
/* The real sigaction, registered before any handler is installed. */
int signal_table__sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* The calling thread's shadow bit: the sampling signal the program believes it blocked
 * (wrap/signal_masks.c keeps it). */
extern AP_TLS int ap_shadow_signo;

/* fatal.c: a deadly signal. fatal__set_stop registers what finishes the file (the
 * session's emergency stop), before any handler is installed: the handler never
 * calls up into the session by name. */
void fatal__set_stop(void (*stop)(void));
void fatal__on_deadly(int sig, siginfo_t *si, void *ucontext);
void fatal__die(int sig, siginfo_t *si);

#endif /* AUTOPROF_HANDLER_H */
