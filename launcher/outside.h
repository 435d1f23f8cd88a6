/* SPDX-License-Identifier: MIT */
/*
 * outside.h - profiling from outside the program: the launcher opens the
 * sampling events on the program (or on a running process), drains their
 * rings and writes the perf.data itself. For what LD_PRELOAD cannot enter:
 * static programs, Go's runtime (raw clone, raw rt_sigaction), processes
 * already running.
 *
 *   outside.c      the run: fork + events before exec, or attach (-p/-t); the loop
 *   outside_rings.c the per-CPU rings: drain, order, rewrite samples, count
 *   perf_out.c     the perf.data file: header, ids, attr, data, features
 *   unwind_user.c  user register + stack copies unwound by report/'s unwinder
 *   attach.c       -p/-t: the targets' threads, their maps and names as records
 *   outside_plan.c the attr and the events (per CPU, per target)
 *   outside_stat.c the counters and the FILE.stat sibling (the library's stat_records.c)
 *   outside_windows.c AUTOPROF_WINDOW: one file per window
 *   outside_agg.c  AUTOPROF_AGGREGATE: samples merged by stack (the library's aggregate.c)
 *   outside_ctl.c  `autoprof ctl` on the run: its endpoints and answers
 */
#ifndef AUTOPROF_LAUNCHER_OUTSIDE_H
#define AUTOPROF_LAUNCHER_OUTSIDE_H

#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common.h"

/* ---- perf_out.c ---- */

struct perf_out {
	int fd;
	char path[4096];
	uint64_t data_off, end; /* where the data starts; the file's end */
	struct perf_event_attr attr;
	char ev_name[64];
	uint64_t *ids;
	int nr_ids;
	char *buf; /* records not written yet */
	size_t len, cap;
	uint64_t first_time, last_time;
	uint64_t samples, lost;
	char **files; /* object files named by MMAP2 records, for the build ids */
	size_t nr_files, cap_files;
	char **argv;			  /* the command (-p: none) */
	int err;			  /* the first write error (-errno) */
	uint64_t prev_samples, prev_lost; /* of the earlier windows' files */
	/* Told every record but samples and rounds (the windows' side-band state). */
	void (*note)(void *ctx, const struct perf_event_header *h);
	void *note_ctx;
};

/*
 * Create @path (an existing file moved to PATH.old, as perf record does;
 * 0600, never through a symlink) with one attr @attr named @name whose
 * events have the @n ids @ids. Returns 0 or -errno.
 */
int perf_out__open(struct perf_out *o, const char *path, const struct perf_event_attr *attr,
		   const char *name, const uint64_t *ids, int n, char **argv);
/* Append one record (in the file's sample format). */
void perf_out__add(struct perf_out *o, const void *rec, size_t len);
/* Note an object file named by an MMAP2 record (its build id goes into the features). */
void perf_out__note_file(struct perf_out *o, const char *name);
/* Write what is buffered and the header's data size: readable up to here. */
int perf_out__flush(struct perf_out *o);
/* Flush, then the features (build ids, machine, command, sample times). Returns 0 or -errno. */
int perf_out__finish(struct perf_out *o);
/*
 * Finish the file and go on in a new one at @path with the same attr, ids
 * and command (AUTOPROF_WINDOW); the counts go on in prev_samples and
 * prev_lost. Returns 0 or -errno (the old file's error first).
 */
int perf_out__rotate(struct perf_out *o, const char *path);

/* ---- unwind_user.c ---- */

struct unwind_user;
struct unwind_user *unwind_user__new(void);
/* Tell the unwinder's model about a MMAP2, COMM (exec), FORK or EXIT record. */
void unwind_user__record(struct unwind_user *b, const struct perf_event_header *h, uint64_t time);
/*
 * Unwind one sample's user registers (@abi, @mask, @regs) and stack copy
 * (@stack, @size) of thread @pid/@tid at @time into @out (the pc, then
 * return addresses, at most @max). Returns how many.
 */
int unwind_user__unwind(struct unwind_user *b, uint32_t pid, uint32_t tid, uint64_t time,
			uint64_t abi, uint64_t mask, const uint8_t *regs, const uint8_t *stack,
			uint64_t size, uint64_t *out, int max);
void unwind_user__free(struct unwind_user *b);

/* ---- outside_rings.c ---- */

struct ring; /* preload/handler/ring.c: one perf mmap ring */

struct outside_rings {
	int nr;
	struct ring *ring;  /* one per CPU */
	bool dwarf;	    /* samples carry REGS_USER + STACK_USER: unwind them */
	bool callchain;	    /* (dwarf) a kernel callchain comes first */
	int stack_depth;    /* frames kept */
	uint64_t regs_mask; /* attr.sample_regs_user */
	struct unwind_user *uw;
	struct perf_out *out;
	uint64_t unwound, short_stacks; /* dwarf samples; of them, no caller found */
	uint64_t exits_seen;		/* EXIT records of the main processes */
	struct outside_windows *win;	/* AUTOPROF_WINDOW, or NULL */
	bool said_rotate;		/* a window's file could not be made: said */
	char *scratch;			/* one round's records */
	size_t scratch_len, scratch_cap;
};

/* Map @nr rings of @pages data pages each from fds @fd. Returns 0 or -errno. */
int outside_rings__map(struct outside_rings *r, const int *fd, int nr, unsigned pages);
/* Drain every ring once: records in time order into r->out. Returns how many records. */
size_t outside_rings__drain(struct outside_rings *r);
void outside_rings__unmap(struct outside_rings *r);

/* ---- attach.c ---- */

/* Parse "PID[,PID...]": fill @out (at most @cap). Returns how many, or -1 (said). */
int attach__parse(const char *list, pid_t *out, int cap, const char *flag);
/* The threads of process @pid into @out (at most @cap). Returns how many (0: gone). */
int attach__threads(pid_t pid, pid_t *out, int cap);
/* COMM and MMAP2 records of process @pid as it is now (perf's synthesized ones). */
void attach__synthesize(struct perf_out *o, pid_t pid, struct unwind_user *uw);
/* The kernel's text as perf synthesizes it (for -k). False: kallsyms hides it. */
bool attach__kernel_map(struct perf_out *o);
/* One line saying what permission opening events on another process needs. */
void outside_events__say_denied(int err, const char *what);

/* ---- outside_stat.c ---- */

struct ap_config;
/*
 * Open the counters (cfg->counters) on the @n threads @tids (a command's
 * pid: inherit covers its threads and children). Returns how many are open.
 */
int outside_stat__open(const struct ap_config *cfg, const pid_t *tids, int n, bool enable_on_exec);
/* The command starts now (its exec): the elapsed time counts from here. */
void outside_stat__started(void);
/*
 * Sampling was paused or resumed (`autoprof ctl`) at @now, after the state
 * that began at @since: the counters count while sampling is on only, and
 * their elapsed time leaves the paused time out.
 */
void outside_stat__follow(bool paused, uint64_t now, uint64_t since);
/* Read the counters, write @path.stat (and print them with --stat). True when written. */
bool outside_stat__finish(const char *path);

/* ---- outside_plan.c ---- */

#define OUTSIDE_MAX_CPUS   1024
#define OUTSIDE_RING_PAGES 128	/* 512 KiB per CPU; 2 MiB with stack copies */
#define OUTSIDE_STACK_COPY 8192 /* bytes of user stack per sample, perf's default */

/* What to sample and how: the options (options__parse) as one attr. */
struct outside_plan {
	struct ap_config cfg;
	struct perf_event_attr attr;  /* the sampling event */
	struct perf_event_attr track; /* the side-band records' dummy event */
	bool dwarf;
	const char *stacks; /* for the mode line */
};

/* The options (launcher__options()) into @p; those that do not apply said (unless @quiet). 0. */
int outside_plan__init(struct outside_plan *p, int quiet);
/*
 * The attr: frame-pointer chains (@fp) or register and stack copies; counting
 * from the exec (@enable_on_exec); following new threads and children
 * (@inherit). Settles the event too (cpu-clock where the default cycles is
 * missing): nothing changes the plan afterwards.
 */
void outside_plan__attr(struct outside_plan *p, bool fp, bool enable_on_exec, bool inherit);
/* "cpu-clock at 1000 Hz", for the mode line. */
const char *outside_plan__rate(const struct outside_plan *p);

/* The events: for each target, one per CPU; the first on a CPU owns its ring. */
struct outside_events {
	int ncpu, *ring_fd; /* per CPU */
	int *fd;
	bool *sampling; /* fd[i] samples (else it is a tracking event) */
	int *cpu;	/* fd[i]'s CPU */
	bool mapped;	/* the rings are mapped: a new event goes into its CPU's at once */
	int nr, cap;
	uint64_t *ids;
};

int outside_events__init(struct outside_events *ev);
/* Open the plan's event on @pid on every CPU. Returns 0, or -errno (not said). */
int outside_events__add(struct outside_events *ev, const struct outside_plan *p, pid_t pid);
/*
 * The rings are mapped: every event into its CPU's ring (the kernel takes
 * PERF_EVENT_IOC_SET_OUTPUT only to a mapped ring). 0 or -errno.
 */
int outside_events__redirect(struct outside_events *ev);
/* Start (@on) or stop the sampling events (and their inherited copies). 0 or -errno. */
int outside_events__enable(struct outside_events *ev, bool on);
void outside_events__close(struct outside_events *ev);

/* ---- outside_windows.c ---- */

struct outside_windows {
	uint64_t len;	     /* AUTOPROF_WINDOW in ns; 0: one file */
	uint64_t first, end; /* the first window's start, the current one's end (ns) */
	unsigned keep;	     /* AUTOPROF_KEEP: the newest files kept, or 0 for all */
	char base[4096];     /* the file's name without the stamp */
	char (*kept)[AP_STAMP_LEN];
	unsigned kept_head, kept_count;
	char *state; /* the side-band records a window's file starts with */
	size_t state_len, state_cap;
	bool replaying;
};

/*
 * Set up the windows of @cfg for the output @path, the first starting at
 * @now (CLOCK_MONOTONIC ns): its file's name into @out. Without windows,
 * @path itself. Returns 0 or -errno.
 */
int outside_windows__init(struct outside_windows *w, const struct ap_config *cfg, const char *path,
			  uint64_t now, char *out, size_t cap);
/* Keep @o's side-band records from now on (windows only). */
void outside_windows__attach(struct outside_windows *w, struct perf_out *o);
/* Is a sample at @time past the window's end? */
static inline bool outside_windows__due(const struct outside_windows *w, uint64_t time)
{
	return w->len && time >= w->end;
}
/* End the window: finish @o, start the file of the window @time falls in. 0 or -errno. */
int outside_windows__rotate(struct outside_windows *w, struct perf_out *o, uint64_t time);
/* Free what the windows kept (after the last file is finished). */
void outside_windows__free(struct outside_windows *w);

/* ---- outside_agg.c ---- */

/* AUTOPROF_AGGREGATE: merge samples by stack (the library's aggregate.c) into @o. 0 or -errno. */
int outside_agg__init(struct perf_out *o, uint64_t now);
/* Take the sample @rec (@len bytes, at @time): false when merged, true when still to write. */
bool outside_agg__fold(void *rec, size_t len, uint64_t time);
/* Write what is merged (before a window's end, a dump, the end). */
void outside_agg__emit(void);
/* Are samples merged in this run (outside_agg__init succeeded)? */
bool outside_agg__on(void);

/* ---- outside_ctl.c ---- */

#define OUTSIDE_CTL_SIGNAL (SIGRTMIN + 4) /* `autoprof ctl`'s requests to the launcher */

/* What an answer says (the library's fields, include/autoprof/control.h). */
struct outside_ctl_state {
	bool changed, sampling;
	uint64_t since, sampled_ns, now, took_ns; /* CLOCK_MONOTONIC ns */
	uint64_t samples, lost, threads;
	int error; /* the file's first write error (-errno) */
	const char *file;
};

/*
 * Publish the endpoints of @prog (the program: 0 for none) and of the
 * launcher, naming @file, and take the request signal. 0 or -errno (said).
 */
int outside_ctl__publish(pid_t prog, const char *file);
/* The request that came since the last call (its signal value), or 0. */
uint64_t outside_ctl__take(void);
/* Answer request @v (op in its low byte) with @st, in both reply files. */
void outside_ctl__answer(uint64_t v, const struct outside_ctl_state *st);
/* How many threads process @pid has now (0: gone). */
uint64_t outside_ctl__threads(pid_t pid);
/* Remove the endpoints and their replies; requests are ignored from now on. */
void outside_ctl__withdraw(void);

/* ---- outside.c ---- */

/*
 * Profile @argv from outside (@why: the reason, said in the one mode line).
 * Returns the launcher's exit status (or ends by the command's signal).
 */
int outside__run(char **argv, const char *output, int quiet, const char *why);
/* -p/-t: profile running processes or threads until they end, Ctrl-C or @duration s. */
int outside__attach(const pid_t *ids, int n, bool threads, double duration, const char *output,
		    int quiet);

#endif
