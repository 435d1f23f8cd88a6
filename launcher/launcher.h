/* SPDX-License-Identifier: MIT */
/* launcher.h - the launcher's two halves (launcher.c, launcher_run.c). */
#ifndef AUTOPROF_LAUNCHER_H
#define AUTOPROF_LAUNCHER_H

#include <fcntl.h>

#define O_CLOEXEC_FLAG O_CLOEXEC

void launcher__open_counters(void);
int launcher__run(char **argv, const char *output, int quiet);
int launcher__ctl(int argc, char **argv);

#endif
