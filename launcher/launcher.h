/* SPDX-License-Identifier: MIT */
/* launcher.h - the launcher's two halves (launcher.c, launcher_run.c). */
#ifndef AUTOPROF_LAUNCHER_H
#define AUTOPROF_LAUNCHER_H

#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "autoprof/env.h"

#define O_CLOEXEC_FLAG O_CLOEXEC

struct ap_config;
/* The flags and AUTOPROF_* variables, read once by main() as the library reads them. */
const struct ap_config *launcher__options(void);
/*
 * SIGXFSZ as the launcher was given it, which it ignores for its own writes:
 * called in a child before it execs anything but the launcher itself.
 */
void launcher__restore_xfsz(void);

/* One row of env.h's table as the launcher shows it: a variable and its flag. */
struct launcher_row {
	const char *var, *long_flag, *arg, *def, *help; /* long_flag NULL: no flag */
	int short_flag;
	enum ap_env_who who;
};
/* The rows of env.h's table (--help, getopt, the manual page), @n of them. */
const struct launcher_row *launcher__rows(size_t *n);
void launcher__open_counters(void);

/*
 * The modes that profile from outside (outside*.c, attach.c, top*.c): they
 * link the reader's model and libdw, so only autoprof-outside has them.
 */
struct launcher_outside {
	int (*run)(char **argv, const char *output, int quiet, const char *why);
	int (*attach)(const pid_t *ids, int n, bool threads, double duration, const char *output,
		      int quiet);
	int (*parse_ids)(const char *list, pid_t *out, int cap, const char *flag);
	int (*top)(char **argv, pid_t pid, const char *output, bool output_given);
};
/*
 * main() of autoprof (@out NULL: a command line that needs a mode of @out
 * execs autoprof-outside, beside this binary or in ../lib/autoprof, with the
 * same arguments) and of autoprof-outside. Returns the exit status.
 */
int launcher__main(int argc, char **argv, const struct launcher_outside *out);
int launcher_run__command(char **argv, const char *output, int quiet);
/* `autoprof list [FILTER]`: print the event names -e and --counters take. */
int list_events__run(int argc, char **argv);

/* ---- file_summary.c: what one profile holds, for the closing lines ---- */

struct file_summary {
	int pid;
	uint64_t samples, lost; /* samples of the CPU event (of every event without one) */
	uint64_t clock_samples, clock_ns; /* samples of a CPU-time event, and their periods */
	uint64_t other;			  /* SAMPLE records of the other events (off-CPU, memory) */
	char cmd[256];
};

int file_summary__read(const char *path, struct file_summary *s);
/* The same but the samples and lost samples (left 0): its process (the first COMM
 * record) and command only, without a pass over the whole file. */
int file_summary__read_head(const char *path, struct file_summary *s);

/* ---- man.c: autoprof(1) from env.h's table (the hidden --man) ---- */

#include <stdio.h>
void man__print(FILE *f);

/* ---- static_check.c: programs LD_PRELOAD cannot enter ---- */

bool static_check__is_static(const char *command);
/* A Go program: its .note.go.buildid, .go.buildinfo or .gopclntab section? */
bool static_check__is_go(const char *command);
/* Does it link libraries (DT_NEEDED)? A Go program that does is a cgo one. */
bool static_check__links_libraries(const char *command);
/* "static", "go" or NULL: the two checks above with one open of the file. */
const char *static_check__kind(const char *command);

/* ---- launcher_run.c ---- */

/* Pass the signals someone sends the launcher (kill) on to @pid. */
void launcher_run__forward_signals(pid_t pid);
/* End as a command that ended with wait status @status did (its status, or its signal). */
int launcher_run__end_like(int status);

/*
 * The closing lines: the output files (named after @output, as the library
 * names them: per process image, per window) written since @since.
 */
void launcher_run__list_outputs(const char *output, struct timespec since);
/* The real time now: the start for launcher_run__list_outputs(). */
struct timespec launcher_run__now(void);

/* ---- exec_watch.c: the static programs a preloaded tree runs ---- */

/* Watch the execs of @child's tree (before its exec). 0, or -1: not watched (quiet). */
int exec_watch__start(pid_t child);
/* waitpid(@child) while watching. Returns waitpid's result. */
pid_t exec_watch__wait(pid_t child, int *status);
/*
 * The processes of the watched tree that have not ended (the command's
 * excepted: waited for) and may run the library (no static program), as
 * its records say (drained first): up to @cap in @pids. Returns how many, or
 * (size_t)-1 when not known (no watch, a record lost).
 */
size_t exec_watch__tree(uint32_t *pids, size_t cap);
/* Stop watching (no line). */
void exec_watch__end(void);
/* Stop watching; one line naming the static programs that ran, if any. */
void exec_watch__say(void);

/* ---- perf_flags.c: perf record's spellings, bad flags in one line ---- */

struct option;
/*
 * Say in one line what is wrong with the flag getopt_long() just refused
 * (@c: '?' unknown, ambiguous or given a value it takes none; ':' missing its
 * value), naming what to use instead for perf record's flags that mean
 * nothing here (-a, -C, --switch-output...). Returns 2, the exit status.
 */
int perf_flags__bad(int c, char **argv, const struct option *longopts);
/*
 * -g/--call-graph's @arg as perf spells it: sets *@value to the
 * AUTOPROF_CALLGRAPH value (dwarf is libunwind, said by perf_flags__say())
 * and returns 0; returns 1 when -g stands alone (@may_stand_alone: @arg was
 * the next word, which the caller puts back), 2 after refusing (lbr).
 */
int perf_flags__call_graph(const char *arg, bool may_stand_alone, const char **value);
/* -F's @arg, with perf's "max" read from kernel.perf_event_max_sample_rate into @buf. */
const char *perf_flags__freq(const char *arg, char *buf, size_t cap);
/* Say what a perf spelling turned into (-g dwarf: libunwind), unless @quiet. */
void perf_flags__say(bool quiet);

/* ---- on_window.c: --on-window CMD ---- */

/*
 * Watch @output's folder from a thread: each window file the run finishes
 * gets `CMD FILE` run, unprofiled. Returns 0, or -1 after saying why.
 */
int on_window__start(const char *cmd, const char *output, bool quiet);
/*
 * After the command's end (called by launcher_run__end_like()): the last
 * windows' hooks, every hook waited for, one closing line unless quiet.
 * No-op when not started.
 */
void on_window__finish(void);
/* The launcher merges the run's windows (onefile_windows.c): hooks run for its files only. */
void on_window__merged_only(void);
/* Run the hook for the merged window file @name (in the output's folder), if started. */
void on_window__merged(const char *name);

/* ---- top.c: autoprof top ---- */

/*
 * The live view of @argv (a command, run now) or of process @pid (@argv
 * NULL): the hottest functions every second until q or Ctrl-C. The samples
 * go to @output when @output_given, else to a temporary file removed at the
 * end. Returns the exit status.
 */
int top__run(char **argv, pid_t pid, const char *output, bool output_given);

/* ---- top_names.c: the function names of autoprof top ---- */

struct top_func {
	char *name;
	uint64_t self, total;
	uint64_t mark; /* the sample that counted it last in total */
};
/*
 * The function at @addr in process @pid (its current image), named from its
 * maps (read again when @samples moved since an address was not in them).
 * Returns its index in top_names__funcs(), or UINT32_MAX (out of memory).
 */
uint32_t top_names__func(int pid, uint64_t addr, uint64_t samples);
/* Process @pid exec'd: its addresses name other functions from now on. */
void top_names__exec(int pid);
/* The functions so far (@nr of them); the array moves as it grows. */
struct top_func *top_names__funcs(size_t *nr);
/* Every function's counts back to 0 (the view's z key). */
void top_names__zero(void);
/* Free the symbolizers. */
void top_names__end(void);

/* `autoprof ctl [-t] PID start|stop|dump|status` (ctl.c). */
int ctl__run(int argc, char **argv);
/* What one process answered. */
struct ctl_answer {
	unsigned long long samples, lost, threads, sampling;
};
#define CTL_ABSENT 3 /* ctl__one: no endpoint (nothing said) */
/*
 * Ask process @pid for @op (AP_CTL_*) and say its answer on stdout, its
 * counts into @a. Returns 0, 1 after one line on stderr, or, when @in_tree
 * (one of a launcher's descendants), CTL_ABSENT for a process that is not
 * profiled, gone or another user's, silently. A launcher's pid (library
 * mode) acts on its run (ctl_tree.c).
 */
int ctl__one(int pid, int op, bool timing, bool in_tree, struct ctl_answer *a);
/* Does process @pid publish a control endpoint (nothing said)? */
bool ctl__has_endpoint(int pid);

/* ctl_tree.c: `autoprof ctl LAUNCHER_PID OP` in library mode. */
/*
 * Publish this launcher's endpoint (it profiles @child, whose output is
 * @output), and, when started paused and not @quiet, say @child's pid on stderr.
 */
void ctl_tree__publish(pid_t child, const char *output, int quiet);
/* Remove it (the run ends). */
void ctl_tree__withdraw(void);
/*
 * Ask every profiled descendant of @launcher for @op, one after the other,
 * saying each answer (and, for status, the run's totals). Returns 0, or 1
 * after saying why (none profiled, or one failed).
 */
int ctl_tree__request(int launcher, int op, bool timing);

/* textfile.c: the small text files the launcher reads (endpoints, replies, /proc). */
/* Read the file at @path whole (up to @cap - 1 bytes, not through a link) into @buf,
 * NUL-terminated. Returns its length, or -1. */
ssize_t textfile__read(const char *path, char *buf, size_t cap);
/* The value of the "@key value" line of @text, copied to @out; false when missing. */
bool textfile__field(const char *text, const char *key, char *out, size_t cap);
/* That value as a number, or 0. */
unsigned long long textfile__field_u64(const char *text, const char *key);
/* Start time (field 22, clock ticks since boot) and state (field 3) of a
 * /proc/PID[/task/TID]/stat file; false if it cannot be read. */
bool textfile__stat(const char *path, unsigned long long *start, char *state);

#endif
