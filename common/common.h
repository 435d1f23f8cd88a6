/* SPDX-License-Identifier: MIT */
/*
 * common.h - what the library and the launcher share: the AUTOPROF_* options
 * (options.c), the inherited counting events (counting.c), the one output
 * channel (log.c), the table of the profiler's own descriptors (fdtab.c) and
 * system calls without libc (raw_syscall.c).
 *
 * What common/'s libc calls bind to, in each program that links it:
 * - the launcher (build/autoprof): libc's, every one.
 * - the library (libautoprof.so): a libc function the library also exports
 *   binds to the library's own wrapper, since the library comes first in
 *   the program's lookup order. counting.c's fcntl(F_SETFD) on our counters
 *   goes through wrap/fds.c's fcntl, which passes calls made from the
 *   library's own code (it hides our fds from the program's calls only);
 *   counting.c's read() of a counter and log.c's write() to stderr go
 *   through wrap/waits.c's, which record a blocking call as the calling
 *   thread's off-CPU time when AUTOPROF_OFFCPU is on (none of these runs
 *   in a signal handler); elf_interp.c's close() of a file it opened goes
 *   through wrap/fds.c's, which passes an fd that is not ours. Every other
 *   libc call here (open, pread, getenv, snprintf, dlopen...) is libc's.
 * - the unit tests (tests/unit/test-preload-*): they link the library's
 *   objects, wrap/ included, so as in the library.
 * System calls go through raw_syscall(), never syscall(): the library exports
 * a syscall() wrapper (wrap/process.c) that must first find libc's with dlsym,
 * and the signal handler must not depend on it. raw_syscall__read_file() is
 * made of raw system calls too, so the files it reads open no cancellation
 * point in the program's threads.
 */
#ifndef AUTOPROF_COMMON_H
#define AUTOPROF_COMMON_H

#include <limits.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "autoprof/env.h"

/*
 * A large zero-initialised array (16 KiB and more) that a process touches
 * a little of, or one of 1 KiB and more that a start does not touch at all
 * (memory mode's, a window's, the end's): in .lbss, which the linker places
 * after .bss, so that the small variables a start touches share a few pages
 * instead of lying between the large ones (an anonymous page's first touch
 * costs 13-19 us in the VMs we measure on; the start touched 45 pages of the
 * library's data).
 */
#define AP_LARGE_BSS __attribute__((section(".lbss.autoprof")))

/* Library fds live at or above this number, out of the program's way. */
#define AP_FD_FLOOR 1000

/* ---- common/raw_syscall.c: system calls without libc ---- */

/* syscall(nr, ...) made by the instruction itself: -1 and errno on failure. Async-signal-safe. */
long raw_syscall(long nr, ...);
/*
 * Read a small file (from /proc) whole into @buf (@cap bytes), NUL-terminated;
 * its length, or -errno (@buf is then ""). Raw system calls: no cancellation
 * point, EINTR retried. Async-signal-safe.
 */
ssize_t raw_syscall__read_file(const char *path, char *buf, size_t cap);
/*
 * Does a file written up to @end bytes stay within the process's
 * RLIMIT_FSIZE? (Past it the kernel sends the writing thread SIGXFSZ, which
 * kills by default: the profiler writes its files only where this holds.)
 * Async-signal-safe.
 */
bool raw_syscall__fits_fsize(uint64_t end);

/* ---- common/fdtab.c: the profiler's own file descriptors ---- */

int fdtab__own(int fd);
void fdtab__disown(int fd);
bool fdtab__is_own(int fd);
int fdtab__close(int fd);
int fdtab__next_own(int fd);
int fdtab__dup_high(int fd, bool cloexec);
int fdtab__move_high(int fd, bool cloexec);
bool fdtab__costs(int fd);
bool fdtab__no_room_high(void);

/* ---- common/elf_interp.c: programs without a dynamic loader ---- */

/* The file execvp() would run for @command (searching $PATH as it does) into @out. */
bool elf_interp__resolve(const char *command, char *out, size_t cap);
/* Has the ELF file at @fd a PT_INTERP program header (1, else 0)? -1: not an ELF file we know. */
int elf_interp__has(int fd);
/* Is @path a program without a dynamic loader (static, static-pie; not ld.so itself)? */
bool elf_interp__static_program(const char *path);

/* ---- common/old_file.c: the output file that was there before ---- */

/*
 * Move an existing @path (a symlink is moved, never followed) to PATH.old,
 * as perf record does. 0 when done or when there is none; -EISDIR for a
 * directory; else -errno. Not async-signal-safe.
 */
int old_file__move_aside(const char *path);

/* ---- common/window_stamp.c: the UTC stamp in a window's file name ---- */

#define AP_STAMP_LEN 20 /* "yyyymmddThhmmss.mmm" and its NUL */
/* The UTC stamp of CLOCK_MONOTONIC time @mono into @out (AP_STAMP_LEN bytes). Async-signal-safe. */
void window_stamp__utc(uint64_t mono, char *out);

/* ---- common/log.c: all output of the library, on stderr, prefixed "autoprof: " ---- */

extern int ap_verbose; /* AUTOPROF_VERBOSE level */
extern bool ap_quiet;  /* AUTOPROF_QUIET: no warnings either */

/*
 * A warning (not when quiet), or a note shown from AUTOPROF_VERBOSE=@level
 * on (1: pr_info, 2: pr_dbg): one line, "autoprof: " first. Not
 * async-signal-safe. Called as pr_warn/pr_info/pr_dbg (uftrace's and the
 * kernel's names for them).
 */
void log__warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log__note(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_warn(...) log__warn(__VA_ARGS__)
#define pr_info(...) log__note(1, __VA_ARGS__)
#define pr_dbg(...)  log__note(2, __VA_ARGS__)
/*
 * Keep the first warning in @buf (@len bytes, without "autoprof: ") instead
 * of printing it, even when quiet; a NULL @buf prints again. Not
 * async-signal-safe.
 */
void log__capture(char *buf, size_t len);
/* A line on stderr the first time only (*said marks it). Async-signal-safe. */
void log__say_once(int *said, const char *msg, size_t len);
/*
 * May @len more bytes go to stderr? Not when it is a regular file that they
 * would take past RLIMIT_FSIZE, where the kernel's SIGXFSZ would kill the
 * program for a line of ours: such a line is not said. Async-signal-safe.
 */
bool log__stderr_fits(size_t len);

/* common/env_check.c: env_check__each_unknown() is declared in autoprof/env.h. */

/* ---- common/env_warn.c ---- */

/*
 * Say (pr_warn: not when quiet) one line for each unknown AUTOPROF_* variable
 * of the environment, with the nearest name when one is near. Returns how many.
 * Not async-signal-safe.
 */
int env_warn__say_unknown(void);

/* ---- common/events.c: event names ---- */

/* An event as perf_event_attr needs it, from a name perf (or the PMU) accepts. */
struct ap_event {
	uint32_t type;
	uint64_t config, config1, config2;
	bool levels; /* a modifier chose the privilege levels: exclude_* below apply */
	bool excl_user, excl_kernel, excl_hv;
	uint8_t precise; /* :p, :pp, :ppp */
	bool pmu_named;	 /* found through libpfm4 */
};

/*
 * Parse @name: perf's event names and aliases, rNNNN, the generic cache
 * events, PMU names through libpfm4, with perf's modifiers (:u, :k, :p...).
 * Returns 0, or -ENOENT/-EINVAL with @why saying what is wrong.
 */
int events__parse(const char *name, struct ap_event *ev, char *why, size_t why_len);
/* Set @attr's type, configs, and the levels and precision the name chose. */
void events__apply(const struct ap_event *ev, struct perf_event_attr *attr);

/* ---- common/options.c: AUTOPROF_* variables ---- */

enum ap_callgraph { AP_CG_LIBUNWIND, AP_CG_FP, AP_CG_NONE };

struct ap_config {
	char output[PATH_MAX];
	char event_name[64];
	bool event_auto; /* AUTOPROF_EVENT unset: cycles if the PMU has it */
	struct ap_event event;
	uint64_t freq;	 /* samples per second, or 0 when period is used */
	uint64_t period; /* events per sample, or 0 when freq is used */
	enum ap_callgraph callgraph;
	unsigned stack_depth;
	unsigned batch;	     /* AUTOPROF_BATCH: samples per signal (libunwind), 1 = no batching */
	unsigned stack_copy; /* AUTOPROF_STACK_COPY: bytes of stack per batched sample */
	int signo;
	int verbose;
	bool quiet;
	bool stat;		  /* AUTOPROF_STAT */
	bool kernel;		  /* AUTOPROF_KERNEL: kernel samples and chains too */
	bool follow;		  /* AUTOPROF_FOLLOW: children and exec'd programs too */
	bool aggregate;		  /* AUTOPROF_AGGREGATE: merged samples */
	bool aggregate_check;	  /* AUTOPROF_AGGREGATE_CHECK: both streams, for tests */
	bool offcpu;		  /* AUTOPROF_OFFCPU: off-CPU time */
	bool memory;		  /* AUTOPROF_MEMORY: allocations sampled, live blocks followed */
	uint64_t memory_interval; /* AUTOPROF_MEMORY_INTERVAL: mean bytes between samples */
	bool start; /* AUTOPROF_START: sample from the start (0: when `autoprof ctl` says) */
	bool cost;  /* AUTOPROF_COST: time the handler's phases (set and not 0) */
	uint64_t window_ns; /* AUTOPROF_WINDOW: one file per window of this length, or 0 */
	unsigned keep;	    /* AUTOPROF_KEEP: the newest windows kept, or 0 for all */
	enum { AP_MODE_AUTO, AP_MODE_PERF, AP_MODE_TIMER } mode; /* AUTOPROF_MODE */
	char counters[1024];					 /* AUTOPROF_COUNTERS */
	char counter_fds[1024]; /* AUTOPROF_COUNTER_FDS, from the launcher */
};

/*
 * Fill @cfg from the AUTOPROF_* variables (include/autoprof/env.h), as
 * asked: the library settles it (preload/session/settle.c), the launcher
 * checks its flags with it. Returns 0, or -EINVAL when a variable has a bad
 * value (said in one line naming it). Not async-signal-safe.
 */
int options__parse(struct ap_config *cfg);
const char *options__callgraph_name(enum ap_callgraph cg);

/* ---- common/counting.c: inherited counting events ---- */

#define AP_MAX_COUNTERS 16

struct ap_counter {
	char name[64];
	struct ap_event ev;
	int leader; /* index of its group's leader ({a,b} in the list); itself when alone */
	struct perf_event_attr attr;
	int fd;		  /* -1 when not open */
	bool unsupported; /* the machine lacks it (err says how) */
	int err;
	bool valid;		       /* read at the end */
	uint64_t raw, ena, run, value; /* value is raw scaled by ena/run */
	/* Counted from getrusage, not a perf event (counting.c says why): a
	 * kind (AP_USAGE_*), the usage when counting started plus the usage
	 * while paused (base), and the usage when it paused (held, when held_on). */
	uint8_t usage;
	bool usage_on, held_on;
	uint64_t base, held;
};

struct ap_counters {
	struct ap_counter c[AP_MAX_COUNTERS];
	int n;
	bool adopted;	   /* opened by the launcher */
	bool paused;	   /* open them disabled (sampling paused): counting__set_enabled */
	uint64_t start_ns; /* when the launcher exec'd the program (CLOCK_MONOTONIC) */
};

void counting__attr(struct perf_event_attr *attr, const struct ap_event *ev, bool enable_on_exec);
int counting__parse(struct ap_counters *cs, const char *list);
int counting__open(struct ap_counters *cs, bool enable_on_exec);
/* The same for process @pid (launcher's outside mode: -p, or a child before its exec);
 * close-on-exec. */
int counting__open_task(struct ap_counters *cs, pid_t pid, bool enable_on_exec);
int counting__adopt(struct ap_counters *cs, const char *spec);
void counting__unsupported(const struct ap_counters *cs, char *buf, size_t cap);
void counting__read(struct ap_counters *cs, bool close_them);
void counting__set_enabled(struct ap_counters *cs, bool on);
void counting__close(struct ap_counters *cs);
void counting__keep_across_exec(struct ap_counters *cs, bool keep);
int counting__spec(const struct ap_counters *cs, uint64_t start_ns, char *buf, size_t cap);

#endif /* AUTOPROF_COMMON_H */
