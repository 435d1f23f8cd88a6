/* SPDX-License-Identifier: MIT */
/*
 * internal.h - private structures of the preload library.
 *
 * The library is cut like gperftools' profiler: config.c (what the user asked
 * for), event.c + ring.c (the kernel's sampling event and its ring buffer),
 * sample.c + unwind.c (the signal handler and the stack walk), thread.c
 * (per-thread state), record.c + writer.c + maps.c + features.c (the
 * perf.data file) and main.c (constructor, destructor and start-up order).
 *
 * Functions marked "async-signal-safe" run inside the overflow signal
 * handler: no malloc, no stdio, no locks that the interrupted code could hold.
 */
#ifndef AUTOPROF_PRELOAD_INTERNAL_H
#define AUTOPROF_PRELOAD_INTERNAL_H

#include <limits.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "autoprof/perf_file.h"

#define AP_TLS __thread __attribute__((tls_model("initial-exec")))

/* The id every record of the sampling event carries (ids are labels only). */
#define AP_SAMPLE_ID 1

/* Library fds live at or above this number, out of the program's way. */
#define AP_FD_FLOOR 1000

/* ---- fdtab.c: the profiler's own file descriptors ---- */

int ap_own(int fd);
void ap_disown(int fd);
bool ap_is_own(int fd);
int ap_close(int fd);
int ap_next_own(int fd);
int ap_move_high(int fd, bool cloexec);
ssize_t ap_read_file(const char *path, char *buf, size_t cap);

/* ---- log.c: all output of the library, on stderr, prefixed "autoprof: " ---- */

extern int ap_verbose; /* AUTOPROF_VERBOSE level */
extern bool ap_quiet;  /* AUTOPROF_QUIET: no warnings either */

/* Not async-signal-safe. */
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_dbg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- config.c: AUTOPROF_* variables ---- */

enum ap_callgraph { AP_CG_LIBUNWIND, AP_CG_FP, AP_CG_NONE };

struct ap_config {
	char output[PATH_MAX];
	char event_name[64];
	bool event_auto; /* AUTOPROF_EVENT unset: cycles if the PMU has it */
	uint32_t event_type;
	uint64_t event_config;
	uint64_t freq;	 /* samples per second, or 0 when period is used */
	uint64_t period; /* events per sample, or 0 when freq is used */
	enum ap_callgraph callgraph;
	unsigned stack_depth;
	int signo;
	int verbose;
	bool quiet;
	bool stat;   /* AUTOPROF_STAT */
	bool kernel; /* AUTOPROF_KERNEL: kernel samples and chains too */
	bool follow; /* AUTOPROF_FOLLOW: children and exec'd programs too */
	enum { AP_MODE_AUTO, AP_MODE_PERF, AP_MODE_TIMER } mode; /* AUTOPROF_MODE */
	char counters[1024];					 /* AUTOPROF_COUNTERS */
	char counter_fds[1024]; /* AUTOPROF_COUNTER_FDS, from the launcher */
};

int config__parse(struct ap_config *cfg);
int config__event_lookup(const char *name, uint32_t *type, uint64_t *config);
const char *config__callgraph_name(enum ap_callgraph cg);

/* ---- ring.c: one perf mmap ring buffer ---- */

struct ring {
	struct perf_event_mmap_page *page;
	const char *data;
	uint64_t mask; /* data_size - 1 */
	size_t map_len;
};

int ring__map(struct ring *r, int fd, unsigned data_pages);
void ring__unmap(struct ring *r);

/*
 * Callback for each record: rec points at a contiguous copy (or into the ring
 * when it does not wrap); last_sample is true for the newest SAMPLE record.
 */
typedef void (*ring_record_fn)(void *ctx, const struct perf_event_header *rec, bool last_sample);
void ring__drain(struct ring *r, char *scratch, size_t scratch_len, ring_record_fn fn, void *ctx);

/* ---- event.c: the per-thread sampling event ---- */

int event__sampler_attr(const struct ap_config *cfg, struct perf_event_attr *attr);
int event__open(struct perf_event_attr *attr, pid_t tid);
int event__route_signal(int fd, int signo, pid_t tid);
int event__probe_default(struct ap_config *cfg, int *fell_back);
int event__max_sample_rate(void);

/* ---- unwind.c: user stacks with libunwind ---- */

int unwind__init(void);
void unwind__prime_thread(void);
int unwind__stack(void *ucontext, uint64_t *ips, int max, void **trace, int trace_max, bool *slow);
bool unwind__owns_pc(uintptr_t pc);
bool unwind__in_handler(void);
bool unwind__is_profiler_pc(uintptr_t pc);
uint64_t unwind__pc(void *ucontext);
uint64_t unwind__skipped_in_text(void);

/* ---- writer.c: the perf.data file ---- */

/* One attr of the file: the sampling event first, then the counters. */
#define AP_MAX_EVENTS 24
struct writer_event {
	struct perf_event_attr attr;
	uint64_t id;
	char name[64];
};

/*
 * The feature sections, laid out once (features.c) and written by the writer
 * after the data at every flush: bodies in one block, each at rel[i], the
 * SAMPLE_TIME body's two u64 at sample_time (filled in at each write).
 */
#define AP_MAX_FEATURES 16
struct writer_features {
	char *body;
	size_t len;
	int n;
	size_t rel[AP_MAX_FEATURES], size[AP_MAX_FEATURES];
	size_t sample_time; /* SIZE_MAX: none */
	uint64_t bits[PERF_FEAT_BITS / 64];
};

struct writer {
	int fd;
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
};

int writer__open(struct writer *w, const char *path, const struct writer_event *events, int n);
int writer__append(struct writer *w, const void *buf, size_t len);
void writer__note_times(struct writer *w, uint64_t first, uint64_t last);
const struct writer_features *writer__set_features(struct writer *w,
						   const struct writer_features *feat);
int writer__finish(struct writer *w, bool tidy);
void writer__abandon(struct writer *w);
int writer__reopen(struct writer *w);
int writer__update_attr(struct writer *w, int i);
int writer__move_fd(struct writer *w, int min);

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

/* ---- maps.c: the process's mappings ---- */

int maps__write_all(struct writer *w, pid_t pid);
int maps__write_kernel(struct writer *w);

/* ---- session/objects.c: the loaded objects, without the loader's lock ---- */

/* Code a sample must not be unwound from. */
enum ap_obj_kind {
	AP_OBJ_LOADER = 1,   /* ld-linux: _dl_*, lazy binding, the loader's lock */
	AP_OBJ_UNWINDER = 2, /* libunwind: its locks and caches */
	AP_OBJ_EH = 4,       /* libgcc_s: _Unwind_*, stacks mid-switch */
	AP_OBJ_SELF = 8,     /* this library */
};

struct ap_thread;
void objects__init(void);
void objects__new_file(void);
unsigned objects__kind(uintptr_t pc);
bool objects__enter(void);
void objects__leave(void);
void objects__learn(uintptr_t pc);
uint64_t objects__skipped_busy(void);
void objects__note(struct ap_thread *t, const uint64_t *chain, unsigned nr);
unsigned objects__build_id(uintptr_t addr, uint8_t *id);
bool objects__ready(void);
struct dl_phdr_info;
int objects__iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data);
void objects__before_dlclose(void);
void objects__after_dlclose(void);

/* ---- thread.c: per-thread sampling state ---- */

struct ap_thread {
	pid_t tid;
	int fd;	  /* the number the event had when its signal was routed (the si_fd of
		   * its signals); closed since: a thread holds no fd */
	int slot; /* in the registry */
	struct ring ring;
	char *buf; /* records waiting for writer__append */
	size_t len, cap;
	char *scratch; /* a ring record that wraps, copied out */
	uint64_t last_flush;
	uint64_t samples, lost, throttles, unwind_skipped, unwind_short, period_sum;
	uint64_t unwinds, unwind_ns, frames; /* unwind cost, measured when verbose */
	uint64_t unwind_slow;		     /* unwinds by DWARF steps, not the fast trace */
	uint64_t first_time, last_time;
	void *mem; /* one mapping holds this struct, buf and scratch */
	size_t mem_len;
	pthread_t handle; /* 0 for threads attached from outside */
	bool is_timer;	  /* sampled by a CPU-time timer (timer.c), not a perf event */
	timer_t timer;
	uint64_t last_cpu; /* thread CPU time at the last timer sample */
	int closed;	   /* set once by whoever stops the thread */
	int in_handler;	   /* the thread's handler is using it */
};

/*
 * Per-thread scratch: a ring record that wraps, then the call chain being
 * built, then the raw trace it is cut from (the handler's own frames first).
 */
#define AP_MAX_CHAIN	   1024 /* AUTOPROF_STACK_DEPTH's limit */
#define AP_HANDLER_FRAMES  64	/* room for the frames from the handler to the interrupted one */
#define AP_RING_COPY_BYTES (AP_MAX_CHAIN * 8 + 1024)
#define AP_CHAIN_BYTES	   ((AP_MAX_CHAIN + 2) * 8)
#define AP_TRACE_ENTRIES   (AP_MAX_CHAIN + AP_HANDLER_FRAMES)
#define AP_SCRATCH_BYTES   (AP_RING_COPY_BYTES + AP_CHAIN_BYTES + AP_TRACE_ENTRIES * 8)

extern AP_TLS struct ap_thread *ap_self;

int thread__start(void);
int thread__attach(pid_t tid);
void thread__stop_self(void);
void thread__stop_all(void);
struct ap_thread *thread__from_fd(int fd);
bool thread__enter(struct ap_thread *t);
pid_t thread__tid_of(pthread_t handle);
void thread__rename(pid_t tid, const char *name);
void thread__warn_once(int err);
void thread__forget_all(void);
void thread__stop_all_emergency(void);
void thread__reroute(int signo);
void thread__atfork_prepare(void);
void thread__atfork_parent(void);
void thread__leave(struct ap_thread *t);
void thread__flush(struct ap_thread *t);
char *thread__reserve(struct ap_thread *t, size_t len);
void thread__maybe_flush(struct ap_thread *t);
void thread__before_seccomp(bool all_threads);
bool thread__sandboxed(void);

/* ---- env.c: the environment handed to descendants ---- */

void env__init(void);
void env__drop_preload(void);
char **env__for_exec(char *const *envp, char **store, size_t store_len, char *strings,
		     size_t strings_len, bool same_process);
size_t env__count(char *const *envp);

/* ---- signals.c: sharing signals with the program ---- */

/* Who holds a signal: the program (none), the sampler, or fatal.c. */
enum { AP_HOLD_NONE, AP_HOLD_SAMPLE, AP_HOLD_FATAL };

void signals__init(void);
int ap_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
int ap_sigmask(int how, const sigset_t *set, sigset_t *old);
void ap_block_sampling(sigset_t *old);
int signals__hold(int sig, int who, const struct sigaction *ours);
void signals__release(int sig);
int signals__holder(int sig);
void signals__note_sampling(int sig);
bool signals__is_sample(int sig, const siginfo_t *si);
void signals__deliver(int sig, siginfo_t *si, void *uc);
void signals__adopt_mask(int signo);
int signals__shadow(void);
void signals__set_shadow(int signo);
void signals__before_exec(sigset_t *saved);
void signals__exec_failed(const sigset_t *saved);

/* ---- fatal.c: finishing the file on a deadly signal ---- */

void fatal__install(void);
void fatal__take(int sig);
void fatal__die(int sig, siginfo_t *si);

/* ---- interpose.c: pthread_create, pthread_setname_np, prctl ---- */

void interpose__init(void);

/* ---- timer.c: the fallback sample source ---- */

int timer__open(struct ap_thread *t);
int timer__start(struct ap_thread *t);
void timer__close(struct ap_thread *t);
void timer__retarget(struct ap_thread *t);
bool timer__is_ours(const siginfo_t *si);
void timer__sample(struct ap_thread *t, void *ucontext);

/* ---- sample.c: the overflow signal handler ---- */

int sample__install(int signo);
void sample__uninstall(void);
void sample__drain(struct ap_thread *t, void *ucontext);
void sample__from_context(struct ap_thread *t, void *ucontext, uint64_t time, uint32_t cpu,
			  uint64_t period);

/* ---- features.c: the header's feature sections ---- */

int features__early(struct writer *w);
int features__write(struct writer *w);
int features__write_emergency(struct writer *w);

/* ---- counters.c: inherited counting events ---- */

#define AP_MAX_COUNTERS 16

struct ap_counter {
	char name[48];
	uint32_t type;
	uint64_t config;
	struct perf_event_attr attr;
	int fd;		  /* -1 when not open */
	bool unsupported; /* the machine lacks it (err says how) */
	int err;
	bool valid;		       /* read at the end */
	uint64_t raw, ena, run, value; /* value is raw scaled by ena/run */
};

struct ap_counters {
	struct ap_counter c[AP_MAX_COUNTERS];
	int n;
	bool adopted;	   /* opened by the launcher */
	uint64_t start_ns; /* when the launcher exec'd the program (CLOCK_MONOTONIC) */
};

void counters__attr(struct perf_event_attr *attr, uint32_t type, uint64_t config,
		    bool enable_on_exec);
int counters__parse(struct ap_counters *cs, const char *list);
int counters__open(struct ap_counters *cs, bool enable_on_exec);
int counters__adopt(struct ap_counters *cs, const char *spec);
void counters__unsupported(const struct ap_counters *cs, char *buf, size_t cap);
void counters__read(struct ap_counters *cs, bool close_them);
void counters__close(struct ap_counters *cs);
void counters__keep_across_exec(struct ap_counters *cs, bool keep);
int counters__spec(const struct ap_counters *cs, char *buf, size_t cap);

/* ---- stat.c: the counter totals, in the file and on stderr ---- */

int stat__write(struct writer *w, const struct ap_counters *cs, int first_id, uint64_t elapsed,
		uint64_t sampled);
void stat__print(const struct ap_counters *cs, uint64_t elapsed_ns);

/* ---- main.c: the one session of this process ---- */

struct ap_session {
	struct ap_config cfg;
	struct ap_counters counters;
	struct perf_event_attr attr; /* the kernel event each thread opens */
	struct writer writer;
	pid_t pid;
	bool active;
	bool top;	      /* the first process of the run */
	bool timer_mode;      /* sampling with CPU-time timers (timer.c) */
	int gen;	      /* how many execs this process made before this image */
	bool exec_pending;    /* finished for an exec that may still fail */
	bool exec_keeps_name; /* that image was empty: the next one takes its name */
	uint64_t start_time, first_sample, last_sample;
	uint64_t samples, lost, throttles, unwind_skipped, unwind_short, threads, period_sum;
	uint64_t unwinds, unwind_ns, frames, unwind_slow;
};

extern struct ap_session autoprof;

uint64_t ap_now(void);		 /* CLOCK_MONOTONIC in ns; async-signal-safe */
uint64_t ap_thread_cpu_ns(void); /* this thread's CPU time in ns; async-signal-safe */
int autoprof__start(void);
void autoprof__stop(void);
void autoprof__before_exec(void);
void autoprof__exec_failed(void);
int autoprof__next_gen(void);
void autoprof__emergency_stop(void);

#endif /* AUTOPROF_PRELOAD_INTERNAL_H */
