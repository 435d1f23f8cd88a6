/* SPDX-License-Identifier: MIT */
/* launcher.h - the launcher's two halves (launcher.c, launcher_run.c). */
#ifndef AUTOPROF_LAUNCHER_H
#define AUTOPROF_LAUNCHER_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define O_CLOEXEC_FLAG O_CLOEXEC

struct ap_config;
/* The flags and AUTOPROF_* variables, read once by main() as the library reads them. */
const struct ap_config *launcher__options(void);
void launcher__open_counters(void);
int launcher__run(char **argv, const char *output, int quiet);
/* `autoprof list [FILTER]`: print the event names -e and --counters take. */
int launcher__list_events(int argc, char **argv);

/* ---- summary.c: what one profile holds, for the closing lines ---- */

struct file_summary {
	int pid;
	uint64_t samples, lost;
	uint64_t clock_samples, clock_ns; /* samples of a CPU-time event, and their periods */
	char cmd[256];
};

int summary__read(const char *path, struct file_summary *s);

/* ---- man.c: autoprof(1) from env.h's table (the hidden --man) ---- */

#include <stdio.h>
void launcher__man(FILE *f);

/* ---- static_check.c: programs LD_PRELOAD cannot enter ---- */

bool launcher__is_static(const char *command);
/* A Go program: its .note.go.buildid, .go.buildinfo or .gopclntab section? */
bool launcher__is_go(const char *command);
/* Does it link libraries (DT_NEEDED)? A Go program that does is a cgo one. */
bool launcher__links_libraries(const char *command);

/* ---- launcher_run.c ---- */

/* Pass the signals someone sends the launcher (kill) on to @pid. */
void launcher__forward_signals(pid_t pid);
/* End as a command that ended with wait status @status did (its status, or its signal). */
int launcher__end_like(int status);

/*
 * The closing lines: the output files (named after @output, as the library
 * names them: per process image, per window) written since @since.
 */
void launcher__list_outputs(const char *output, time_t since);

/* ---- exec_watch.c: the static programs a preloaded tree runs ---- */

/* Watch the execs of @child's tree (before its exec). 0, or -1: not watched (quiet). */
int exec_watch__start(pid_t child);
/* waitpid(@child) while watching. Returns waitpid's result. */
pid_t exec_watch__wait(pid_t child, int *status);
/* Stop watching (no line). */
void exec_watch__end(void);
/* Stop watching; one line naming the static programs that ran, if any. */
void exec_watch__say(void);

/* `autoprof ctl [-t] PID start|stop|dump|status` (ctl.c). */
int launcher__ctl(int argc, char **argv);

#endif
