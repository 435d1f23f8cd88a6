/* SPDX-License-Identifier: MIT */
/*
 * env.h - every AUTOPROF_* variable, in one table, and the accessor every
 * read of one goes through.
 *
 * The same table drives the preload library's parser (common/options.c),
 * the launcher's flags, --help and autoprof(1), autoprof-report(1)'s
 * ENVIRONMENT, and the environment an exec'd program inherits
 * (preload/session/child_env.c); tests/docs.t checks that doc/variables.md
 * lists every row. Add a variable here and nowhere else, and read it with
 * ap_env(AP_ENV_<id>), never with a bare getenv.
 *
 * X(id, who, long_flag, short_flag, arg, default, help)
 *   id         suffix of the variable: AUTOPROF_<id>
 *   who        the program that reads it: LIB (the preload library; the
 *              launcher sets it from its flag and checks it), LAUNCHER (the
 *              autoprof command only) or REPORT (autoprof-report)
 *   long_flag  the launcher's --flag (spelled like perf record's where one exists),
 *              or NULL for a variable no flag sets
 *   short_flag the launcher's -f, or 0
 *   arg        the argument's name in --help, or NULL for an on/off switch
 *   default    the value used when the variable is unset ("" = none); for
 *              REPORT rows the reader's constant it documents (PREFAULT_*
 *              in report/read/prefault.c, SPEC_GAP in report/driver/onewalk.c)
 *   help       one line for --help, the manual pages and doc/variables.md
 *
 * The variables of others that the programs read are listed in
 * AUTOPROF_OTHER_ENV_TABLE below, for the manual pages; they are read as
 * they are (getenv), each in the one place named there.
 */
#ifndef AUTOPROF_ENV_H
#define AUTOPROF_ENV_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define AUTOPROF_DEFAULT_COUNTERS                                                                  \
	"task-clock,context-switches,page-faults,{cycles,instructions},"                           \
	"{branches,branch-misses},{cache-references,cache-misses}"

#define AUTOPROF_ENV_TABLE(X)                                                                      \
	X(OUTPUT, LIB, "output", 'o', "FILE", "perf.data",                                         \
	  "output file; %p in it becomes the process id")                                          \
	X(EVENT, LIB, "event", 'e', "EVENT", "",                                                   \
	  "sampling event: cycles, instructions, cpu-clock, task-clock, page-faults, ... or "      \
	  "rNNNN; "                                                                                \
	  "default cycles where the PMU has it, else cpu-clock")                                   \
	X(FREQ, LIB, "freq", 'F', "HZ", "1000",                                                    \
	  "samples per second of each thread's run time, clamped to "                              \
	  "kernel.perf_event_max_sample_rate")                                                     \
	X(PERIOD, LIB, "count", 'c', "N", "",                                                      \
	  "sample every N events instead of at a frequency (overrides FREQ)")                      \
	X(CALLGRAPH, LIB, "call-graph", 'g', "MODE", "libunwind",                                  \
	  "user stacks: libunwind (DWARF unwind info, no frame pointers needed), fp (kernel "      \
	  "frame-pointer chains) or none")                                                         \
	X(STACK_DEPTH, LIB, "stack-depth", 0, "N", "127", "deepest call chain kept, 1..1024")      \
	X(BATCH, LIB, "batch", 0, "N", "8",                                                        \
	  "libunwind stacks: one signal per N samples or more (more at high rates, in the same "   \
	  "ring), each sample unwound from a copy of its stack (0 or 1: a signal per sample, "     \
	  "unwound live)")                                                                         \
	X(STACK_COPY, LIB, "stack-copy", 0, "BYTES", "2048",                                       \
	  "bytes of user stack each batched sample copies at first (x4 while stacks are deeper, "  \
	  "less when they need much less), 512..60000")                                            \
	X(MODE, LIB, "mode", 0, "MODE", "auto",                                                    \
	  "sample source: perf (per-thread perf events), timer (per-thread POSIX CPU-time "        \
	  "timers, at most the kernel tick rate) or auto (perf, else timer where "                 \
	  "perf_event_open is refused)")                                                           \
	X(KERNEL, LIB, "kernel", 'k', NULL, "0",                                                   \
	  "sample kernel code and kernel call chains too, where perf_event_paranoid permits")      \
	X(SIGNAL, LIB, "signal", 0, "SIG", "",                                                     \
	  "signal that carries overflow notifications; default SIGPROF")                           \
	X(COUNTERS, LIB, "counters", 0, "LIST", AUTOPROF_DEFAULT_COUNTERS,                         \
	  "counting events, totals for the whole process tree (comma-separated, or none; "         \
	  "{a,b} counts a and b as a group; perf's names, cache events such as "                   \
	  "L1-dcache-load-misses, the PMU's own names such as INST_RETIRED.ANY through "           \
	  "libpfm4); hardware ones are skipped where the PMU lacks them")                          \
	X(STAT, LIB, "stat", 0, NULL, "0",                                                         \
	  "print the counter totals perf-stat style on stderr at exit")                            \
	X(FOLLOW, LIB, "follow", 0, "0|1", "1",                                                    \
	  "profile forked children and exec'd programs too, each into its own file "               \
	  "(NAME.<pid>, NAME.<pid>.<n> after the n-th exec)")                                      \
	X(AGGREGATE, LIB, "aggregate", 0, NULL, "0",                                               \
	  "merge a thread's samples with the same stack into one record per window (0.2 s "        \
	  "growing to 10 s), its period the sum: files of a few bytes per sample; with "           \
	  "--memory, its allocations per stack and block size too")                                \
	X(OFFCPU, LIB, "off-cpu", 0, NULL, "0",                                                    \
	  "record where threads wait off the CPU (sleep, locks, I/O) and for how long, as the "    \
	  "event offcpu-time (period in ns)")                                                      \
	X(MEMORY, LIB, "memory", 0, NULL, "0",                                                     \
	  "profile native memory: allocations sampled by bytes (events alloc-bytes, period in "    \
	  "bytes) and what is still live at the end (live-bytes): leaks")                          \
	X(MEMORY_INTERVAL, LIB, "memory-interval", 0, "BYTES", "524288",                           \
	  "with --memory: mean bytes allocated between two samples (Poisson); 1 records every "    \
	  "allocation")                                                                            \
	X(AGGREGATE_CHECK, LIB, NULL, 0, NULL, "0",                                                \
	  "for tests: keep every sample and add the aggregated ones as a second event, "           \
	  "NAME-aggregated")                                                                       \
	X(START, LIB, "start", 0, "0|1", "1",                                                      \
	  "1: sample from the start; 0: start paused, until `autoprof ctl PID start`")             \
	X(WINDOW, LIB, "window", 0, "DURATION", "",                                                \
	  "write one complete perf.data per window of DURATION (500ms, 10s, 5m, 1h): "             \
	  "FILE.<UTC start time>")                                                                 \
	X(KEEP, LIB, "keep", 0, "N", "", "with --window: keep the newest N window files (0: all)") \
	X(WINDOW_EPOCH, LIB, NULL, 0, "NS", "",                                                    \
	  "set by the launcher: the CLOCK_MONOTONIC ns its run's windows count from, so that "     \
	  "every process's windows line up (window k: EPOCH + k * DURATION)")                      \
	X(ON_WINDOW, LAUNCHER, "on-window", 0, "CMD", "",                                          \
	  "with --window: run CMD FILE for each finished window file (a failure is said, "         \
	  "never stops profiling)")                                                                \
	X(PER_PROCESS, LAUNCHER, "per-process", 0, NULL, "0",                                      \
	  "one file per process image (FILE, FILE.<pid>, FILE.<pid>.<n>), as a bare LD_PRELOAD "   \
	  "run writes, instead of the whole run in FILE")                                          \
	X(COUNTER_FDS, LIB, NULL, 0, "LIST", "",                                                   \
	  "set by the launcher: counters it opened with enable_on_exec (name:fd,...)")             \
	X(TOP, LIB, NULL, 0, "PID", "",                                                            \
	  "set by the library: the first profiled process of the run")                             \
	X(PROBED, LIB, NULL, 0, "HASH:ERRNO", "",                                                  \
	  "set by the library: the sampling event the run's first process found missing "          \
	  "(its attr's hash, the error), not probed again by its descendants")                     \
	X(MEMORY_SAID, LIB, NULL, 0, "1", "",                                                      \
	  "set by the libraries: a process of the run said that allocations are not profiled, "    \
	  "so that its descendants and the programs it execs do not say it again")                 \
	X(LAUNCHER, LIB, NULL, 0, "PID", "",                                                       \
	  "set by the launcher: it checked the run's AUTOPROF_* names, so the library does not "   \
	  "say them again")                                                                        \
	X(IMAGE, LIB, NULL, 0, "PID:N", "",                                                        \
	  "set by the library at exec: the program is the N-th exec of process PID")               \
	X(VERBOSE, LIB, "verbose", 'v', NULL, "0", "say what the profiler does, on stderr")        \
	X(QUIET, LIB, "quiet", 'q', NULL, "0", "say nothing on stderr, not even warnings")         \
	X(COST, LIB, NULL, 0, "0|1", "0",                                                          \
	  "for benchmarks: time the handler's phases (unwind, object records, record, flush, "     \
	  "drain, entry) and print them per sample at exit")                                       \
	X(LIB, LAUNCHER, NULL, 0, "FILE", "",                                                      \
	  "the libautoprof.so the launcher preloads, instead of the one beside it or in "          \
	  "../lib/autoprof/")                                                                      \
	X(NO_KSYM_CACHE, REPORT, NULL, 0, "ANY", "",                                               \
	  "set (to anything): read /proc/kallsyms every run instead of the cached table")          \
	X(REPORT_NO_CFI_CACHE, REPORT, NULL, 0, "0|1", "0",                                        \
	  "not 0: unwind every dwarf sample through libdw, not the cached CFI rules")              \
	X(REPORT_NO_DEBUG_CACHE, REPORT, NULL, 0, "0|1", "0",                                      \
	  "not 0: read compressed debug info as it is, not through (nor into) its unpacked copy "  \
	  "in $XDG_CACHE_HOME/autoprof/debug")                                                     \
	X(REPORT_NO_PREFAULT, REPORT, NULL, 0, "0|1", "0",                                         \
	  "not 0: no prefault thread (one that maps a big file's pages ahead of the walker)")      \
	X(REPORT_PREFAULT_MIN, REPORT, NULL, 0, "BYTES", "268435456",                              \
	  "the file size (bytes) from which the prefault thread runs")                             \
	X(REPORT_PREFAULT_AHEAD, REPORT, NULL, 0, "BYTES", "16777216",                             \
	  "how far (bytes) the prefault thread maps ahead of the walker")                          \
	X(REPORT_PREFAULT_RELEASE, REPORT, NULL, 0, "BYTES", "16777216",                           \
	  "how many bytes of pages behind the walker the prefault thread hands back at a "         \
	  "time (at 4 times that whatever it does; the walker itself at 8 times)")                 \
	X(REPORT_SPEC_GAP, REPORT, NULL, 0, "BYTES", "1048576",                                    \
	  "bytes of records after the last side-band record at which one walk starts doing "       \
	  "both passes; 0 forces two passes")

#define AUTOPROF_ENV_PREFIX "AUTOPROF_"

/*
 * Y(name, who, help): the other variables the programs read (as getenv
 * returns them), for the manual pages.
 */
#define AUTOPROF_OTHER_ENV_TABLE(Y)                                                                \
	Y("LD_PRELOAD", "autoprof, libautoprof.so",                                                \
	  "the launcher puts the library first in it; the library keeps itself in it across "      \
	  "exec (AUTOPROF_FOLLOW)")                                                                \
	Y("PATH", "autoprof",                                                                      \
	  "where the launcher finds the command, to see whether it is static "                     \
	  "or a Go program")                                                                       \
	Y("XDG_RUNTIME_DIR", "libautoprof.so, autoprof ctl",                                       \
	  "the folder of the control endpoints ($XDG_RUNTIME_DIR/autoprof, else "                  \
	  "/tmp/autoprof-UID)")                                                                    \
	Y("TMPDIR", "autoprof",                                                                    \
	  "where the launcher makes the private folder (autoprof-core.XXXXXX, else in /tmp) "      \
	  "that takes its own near-empty core when the command dumps core")                        \
	Y("XDG_CACHE_HOME, HOME", "autoprof-report",                                               \
	  "the folder of the cached kernel symbol table and of the unpacked copies of compressed " \
	  "debug files ($XDG_CACHE_HOME/autoprof, else ~/.cache/autoprof)")                        \
	Y("DEBUGINFOD_URLS", "autoprof-report",                                                    \
	  "debuginfod servers asked for debug info a build id names (only when set)")              \
	Y("PERF_BUILDID_DIR, HOME", "autoprof-report",                                             \
	  "perf's build-id cache, where objects, the vdso and kallsyms of a recording are "        \
	  "found by build id ($PERF_BUILDID_DIR, else ~/.debug)")

/* The readers of the table's variables (its who column). */
enum ap_env_who { AP_READ_LIB, AP_READ_LAUNCHER, AP_READ_REPORT };

/* AP_ENV_<id>: a row of the table. */
#define AP_ENV_ENUM_ROW(id, who, lf, sf, arg, def, help) AP_ENV_##id,
enum ap_env { AUTOPROF_ENV_TABLE(AP_ENV_ENUM_ROW) AP_ENV_COUNT };
#undef AP_ENV_ENUM_ROW

/* The variable's name, "AUTOPROF_<id>". */
static inline const char *ap_env_name(enum ap_env v)
{
#define AP_ENV_NAME_ROW(id, who, lf, sf, arg, def, help) AUTOPROF_ENV_PREFIX #id,
	static const char *const names[] = {AUTOPROF_ENV_TABLE(AP_ENV_NAME_ROW)};
#undef AP_ENV_NAME_ROW

	return names[v];
}

/* The table's default for the variable ("" for none). */
static inline const char *ap_env_default(enum ap_env v)
{
#define AP_ENV_DEFAULT_ROW(id, who, lf, sf, arg, def, help) def,
	static const char *const defaults[] = {AUTOPROF_ENV_TABLE(AP_ENV_DEFAULT_ROW)};
#undef AP_ENV_DEFAULT_ROW

	return defaults[v];
}

/* The variable's value as the environment holds it, or NULL when unset. */
static inline const char *ap_env(enum ap_env v)
{
	return getenv(ap_env_name(v));
}

/* Is s a switch's word for on (1, yes, on, true)? */
static inline bool ap_env_word_on(const char *s)
{
	return !strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") ||
	       !strcasecmp(s, "true");
}

/*
 * common/env_check.c (linked into the library, the launcher and the reader):
 * @say is called for one unknown variable, the "NAME" of "NAME=value" (@len
 * bytes at @var), with the nearest known name after AUTOPROF_ (or NULL).
 */
typedef void (*env_check_say_fn)(const char *var, int len, const char *hint, void *arg);
/*
 * Call @say for each AUTOPROF_* variable of the environment that the table
 * does not have; with @report_only, only those meant for autoprof-report
 * (AUTOPROF_REPORT_..., or nearest to one of its variables). Returns how many.
 * Not async-signal-safe.
 */
int env_check__each_unknown(bool report_only, env_check_say_fn say, void *arg);

#endif /* AUTOPROF_ENV_H */
