/* SPDX-License-Identifier: MIT */
/*
 * env.h - every AUTOPROF_* variable, in one table.
 *
 * The same table drives the preload library's parser, the launcher's flags
 * and --help, and the README's table (scripts/env-table.sh checks that the
 * README lists every row). Add a variable here and nowhere else.
 *
 * X(id, long_flag, short_flag, arg, default, help)
 *   id         suffix of the variable: AUTOPROF_<id>
 *   long_flag  the launcher's --flag (spelled like perf record's where one exists),
 *              or NULL for a variable the launcher sets itself
 *   short_flag the launcher's -f, or 0
 *   arg        the argument's name in --help, or NULL for an on/off switch
 *   default    the value used when the variable is unset ("" = none)
 *   help       one line for --help and the README
 */
#ifndef AUTOPROF_ENV_H
#define AUTOPROF_ENV_H

#define AUTOPROF_DEFAULT_COUNTERS                                                                  \
	"task-clock,context-switches,cpu-migrations,page-faults,{cycles,instructions},"            \
	"{branches,branch-misses},{cache-references,cache-misses}"

#define AUTOPROF_ENV_TABLE(X)                                                                      \
	X(OUTPUT, "output", 'o', "FILE", "perf.data",                                              \
	  "output file; %p in it becomes the process id")                                          \
	X(EVENT, "event", 'e', "EVENT", "",                                                        \
	  "sampling event: cycles, instructions, cpu-clock, task-clock, page-faults, ... or "      \
	  "rNNNN; "                                                                                \
	  "default cycles where the PMU has it, else cpu-clock")                                   \
	X(FREQ, "freq", 'F', "HZ", "1000",                                                         \
	  "samples per second of each thread's run time, clamped to "                              \
	  "kernel.perf_event_max_sample_rate")                                                     \
	X(PERIOD, "count", 'c', "N", "",                                                           \
	  "sample every N events instead of at a frequency (overrides FREQ)")                      \
	X(CALLGRAPH, "call-graph", 'g', "MODE", "libunwind",                                       \
	  "user stacks: libunwind (DWARF unwind info, no frame pointers needed), fp (kernel "      \
	  "frame-pointer chains) or none")                                                         \
	X(STACK_DEPTH, "stack-depth", 0, "N", "127", "deepest call chain kept, 1..1024")           \
	X(BATCH, "batch", 0, "N", "8",                                                             \
	  "libunwind stacks: one signal per N samples, each sample unwound from a copy of its "    \
	  "stack (0 or 1: a signal per sample, unwound live)")                                     \
	X(STACK_COPY, "stack-copy", 0, "BYTES", "2048",                                            \
	  "bytes of user stack each batched sample copies at first (x4 while stacks are deeper), " \
	  "512..60000")                                                                            \
	X(MODE, "mode", 0, "MODE", "auto",                                                         \
	  "sample source: perf (per-thread perf events), timer (per-thread POSIX CPU-time "        \
	  "timers, at most the kernel tick rate) or auto (perf, else timer where "                 \
	  "perf_event_open is refused)")                                                           \
	X(KERNEL, "kernel", 'k', NULL, "0",                                                        \
	  "sample kernel code and kernel call chains too, where perf_event_paranoid permits")      \
	X(SIGNAL, "signal", 0, "SIG", "",                                                          \
	  "signal that carries overflow notifications; default SIGPROF")                           \
	X(COUNTERS, "counters", 0, "LIST", AUTOPROF_DEFAULT_COUNTERS,                              \
	  "counting events, totals for the whole process tree (comma-separated, or none; "         \
	  "{a,b} counts a and b as a group; perf's names, cache events such as "                   \
	  "L1-dcache-load-misses, the PMU's own names such as INST_RETIRED.ANY through "           \
	  "libpfm4); hardware ones are skipped where the PMU lacks them")                          \
	X(STAT, "stat", 0, NULL, "0",                                                              \
	  "print the counter totals perf-stat style on stderr at exit")                            \
	X(FOLLOW, "follow", 0, "0|1", "1",                                                         \
	  "profile forked children and exec'd programs too, each into its own file "               \
	  "(NAME.<pid>, NAME.<pid>.<n> after the n-th exec)")                                      \
	X(AGGREGATE, "aggregate", 0, NULL, "0",                                                    \
	  "merge a thread's samples with the same stack into one record per window (0.2 s "        \
	  "growing to 10 s), its period the sum: files of a few bytes per sample")                 \
	X(OFFCPU, "off-cpu", 0, NULL, "0",                                                         \
	  "record where threads wait off the CPU (sleep, locks, I/O) and for how long, as the "    \
	  "event offcpu-time (period in ns)")                                                      \
	X(MEMORY, "memory", 0, NULL, "0",                                                          \
	  "profile native memory: allocations sampled by bytes (events alloc-bytes, period in "    \
	  "bytes) and what is still live at the end (live-bytes): leaks")                          \
	X(MEMORY_INTERVAL, "memory-interval", 0, "BYTES", "524288",                                \
	  "with --memory: mean bytes allocated between two samples (Poisson); 1 records every "    \
	  "allocation")                                                                            \
	X(AGGREGATE_CHECK, NULL, 0, NULL, "0",                                                     \
	  "for tests: keep every sample and add the aggregated ones as a second event, "           \
	  "NAME-aggregated")                                                                       \
	X(START, "start", 0, "0|1", "1",                                                           \
	  "1: sample from the start; 0: start paused, until `autoprof ctl PID start`")             \
	X(WINDOW, "window", 0, "DURATION", "",                                                     \
	  "write one complete perf.data per window of DURATION (500ms, 10s, 5m, 1h): "             \
	  "FILE.<UTC start time>")                                                                 \
	X(KEEP, "keep", 0, "N", "", "with --window: keep the newest N window files (0: all)")      \
	X(COUNTER_FDS, NULL, 0, "LIST", "",                                                        \
	  "set by the launcher: counters it opened with enable_on_exec (name:fd,...)")             \
	X(TOP, NULL, 0, "PID", "", "set by the library: the first profiled process of the run")    \
	X(IMAGE, NULL, 0, "PID:N", "",                                                             \
	  "set by the library at exec: the program is the N-th exec of process PID")               \
	X(VERBOSE, "verbose", 'v', NULL, "0", "say what the profiler does, on stderr")             \
	X(QUIET, "quiet", 'q', NULL, "0", "say nothing on stderr, not even warnings")

#define AUTOPROF_ENV_PREFIX "AUTOPROF_"

#endif /* AUTOPROF_ENV_H */
