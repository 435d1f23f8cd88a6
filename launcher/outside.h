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

struct pout {
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
int pout__open(struct pout *o, const char *path, const struct perf_event_attr *attr,
	       const char *name, const uint64_t *ids, int n, char **argv);
/* Append one record (in the file's sample format). */
void pout__add(struct pout *o, const void *rec, size_t len);
/* Note an object file named by an MMAP2 record (its build id goes into the features). */
void pout__note_file(struct pout *o, const char *name);
/* Write what is buffered and the header's data size: readable up to here. */
int pout__flush(struct pout *o);
/* Flush, then the features (build ids, machine, command, sample times). Returns 0 or -errno. */
int pout__finish(struct pout *o);
/*
 * Finish the file and go on in a new one at @path with the same attr, ids
 * and command (AUTOPROF_WINDOW); the counts go on in prev_samples and
 * prev_lost. Returns 0 or -errno (the old file's error first).
 */
int pout__rotate(struct pout *o, const char *path);

/* ---- unwind_user.c ---- */

struct uw_bridge;
struct uw_bridge *uwb__new(void);
/* Tell the unwinder's model about a MMAP2, COMM (exec), FORK or EXIT record. */
void uwb__record(struct uw_bridge *b, const struct perf_event_header *h, uint64_t time);
/*
 * Unwind one sample's user registers (@abi, @mask, @regs) and stack copy
 * (@stack, @size) of thread @pid/@tid at @time into @out (the pc, then
 * return addresses, at most @max). Returns how many.
 */
int uwb__unwind(struct uw_bridge *b, uint32_t pid, uint32_t tid, uint64_t time, uint64_t abi,
		uint64_t mask, const uint8_t *regs, const uint8_t *stack, uint64_t size,
		uint64_t *out, int max);
void uwb__free(struct uw_bridge *b);

/* ---- outside_rings.c ---- */

struct ring; /* preload/handler/ring.c: one perf mmap ring */

struct orings {
	int nr;
	struct ring *ring;  /* one per CPU */
	bool dwarf;	    /* samples carry REGS_USER + STACK_USER: unwind them */
	bool callchain;	    /* (dwarf) a kernel callchain comes first */
	int stack_depth;    /* frames kept */
	uint64_t regs_mask; /* attr.sample_regs_user */
	struct uw_bridge *uw;
	struct pout *out;
	uint64_t unwound, short_stacks; /* dwarf samples; of them, no caller found */
	uint64_t exits_seen;		/* EXIT records of the main processes */
	struct owin *win;		/* AUTOPROF_WINDOW, or NULL */
	bool said_rotate;		/* a window's file could not be made: said */
	char *scratch;			/* one round's records */
	size_t scratch_len, scratch_cap;
};

/* Map @nr rings of @pages data pages each from fds @fd. Returns 0 or -errno. */
int orings__map(struct orings *r, const int *fd, int nr, unsigned pages);
/* Drain every ring once: records in time order into r->out. Returns how many records. */
size_t orings__drain(struct orings *r);
void orings__unmap(struct orings *r);

/* ---- attach.c ---- */

/* Parse "PID[,PID...]": fill @out (at most @cap). Returns how many, or -1 (said). */
int attach__parse(const char *list, pid_t *out, int cap, const char *flag);
/* The threads of process @pid into @out (at most @cap). Returns how many (0: gone). */
int attach__threads(pid_t pid, pid_t *out, int cap);
/* COMM and MMAP2 records of process @pid as it is now (perf's synthesized ones). */
void attach__synthesize(struct pout *o, pid_t pid, struct uw_bridge *uw);
/* The kernel's text as perf synthesizes it (for -k). False: kallsyms hides it. */
bool attach__kernel_map(struct pout *o);
/* One line saying what permission opening events on another process needs. */
void attach__say_denied(int err, const char *what);

/* ---- outside_stat.c ---- */

struct ap_config;
/*
 * Open the counters (cfg->counters) on the @n threads @tids (a command's
 * pid: inherit covers its threads and children). Returns how many are open.
 */
int ostat__open(const struct ap_config *cfg, const pid_t *tids, int n, bool enable_on_exec);
/* The command starts now (its exec): the elapsed time counts from here. */
void ostat__started(void);
/*
 * Sampling was paused or resumed (`autoprof ctl`) at @now, after the state
 * that began at @since: the counters count while sampling is on only, and
 * their elapsed time leaves the paused time out.
 */
void ostat__follow(bool paused, uint64_t now, uint64_t since);
/* Read the counters, write @path.stat (and print them with --stat). True when written. */
bool ostat__finish(const char *path);

/* ---- outside_plan.c ---- */

#define OUTSIDE_MAX_CPUS   1024
#define OUTSIDE_RING_PAGES 128	/* 512 KiB per CPU; 2 MiB with stack copies */
#define OUTSIDE_STACK_COPY 8192 /* bytes of user stack per sample, perf's default */

/* What to sample and how: the options (options__parse) as one attr. */
struct plan {
	struct ap_config cfg;
	struct perf_event_attr attr;  /* the sampling event */
	struct perf_event_attr track; /* the side-band records' dummy event */
	bool dwarf;
	const char *stacks; /* for the mode line */
};

/* The options (launcher__options()) into @p; those that do not apply said (unless @quiet). 0. */
int plan__init(struct plan *p, int quiet);
/*
 * The attr: frame-pointer chains (@fp) or register and stack copies; counting
 * from the exec (@enable_on_exec); following new threads and children
 * (@inherit). Settles the event too (cpu-clock where the default cycles is
 * missing): nothing changes the plan afterwards.
 */
void plan__attr(struct plan *p, bool fp, bool enable_on_exec, bool inherit);
/* "cpu-clock at 1000 Hz", for the mode line. */
const char *plan__rate(const struct plan *p);

/* The events: for each target, one per CPU; the first on a CPU owns its ring. */
struct events {
	int ncpu, *ring_fd; /* per CPU */
	int *fd;
	bool *sampling; /* fd[i] samples (else it is a tracking event) */
	int *cpu;	/* fd[i]'s CPU */
	bool mapped;	/* the rings are mapped: a new event goes into its CPU's at once */
	int nr, cap;
	uint64_t *ids;
};

int events__init(struct events *ev);
/* Open the plan's event on @pid on every CPU. Returns 0, or -errno (not said). */
int events__add(struct events *ev, const struct plan *p, pid_t pid);
/*
 * The rings are mapped: every event into its CPU's ring (the kernel takes
 * PERF_EVENT_IOC_SET_OUTPUT only to a mapped ring). 0 or -errno.
 */
int events__redirect(struct events *ev);
/* Start (@on) or stop the sampling events (and their inherited copies). 0 or -errno. */
int events__enable(struct events *ev, bool on);
void events__close(struct events *ev);

/* ---- outside_windows.c ---- */

struct owin {
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
int owin__init(struct owin *w, const struct ap_config *cfg, const char *path, uint64_t now,
	       char *out, size_t cap);
/* Keep @o's side-band records from now on (windows only). */
void owin__attach(struct owin *w, struct pout *o);
/* Is a sample at @time past the window's end? */
static inline bool owin__due(const struct owin *w, uint64_t time)
{
	return w->len && time >= w->end;
}
/* End the window: finish @o, start the file of the window @time falls in. 0 or -errno. */
int owin__rotate(struct owin *w, struct pout *o, uint64_t time);
/* Free what the windows kept (after the last file is finished). */
void owin__free(struct owin *w);

/* ---- outside_agg.c ---- */

/* AUTOPROF_AGGREGATE: merge samples by stack (the library's aggregate.c) into @o. 0 or -errno. */
int oagg__init(struct pout *o, uint64_t now);
/* Take the sample @rec (@len bytes, at @time): false when merged, true when still to write. */
bool oagg__fold(void *rec, size_t len, uint64_t time);
/* Write what is merged (before a window's end, a dump, the end). */
void oagg__emit(void);
/* Are samples merged in this run (oagg__init succeeded)? */
bool oagg__on(void);

/* ---- outside_ctl.c ---- */

#define OUTSIDE_CTL_SIGNAL (SIGRTMIN + 4) /* `autoprof ctl`'s requests to the launcher */

/* What an answer says (the library's fields, include/autoprof/control.h). */
struct octl_state {
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
int octl__publish(pid_t prog, const char *file);
/* The request that came since the last call (its signal value), or 0. */
uint64_t octl__take(void);
/* Answer request @v (op in its low byte) with @st, in both reply files. */
void octl__answer(uint64_t v, const struct octl_state *st);
/* How many threads process @pid has now (0: gone). */
uint64_t octl__threads(pid_t pid);
/* Remove the endpoints and their replies; requests are ignored from now on. */
void octl__withdraw(void);

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
