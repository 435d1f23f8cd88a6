/* SPDX-License-Identifier: MIT */
/*
 * man.c - autoprof(1), printed as troff by the hidden `autoprof --man` from
 * the same table as --help and the library's parser (include/autoprof/env.h),
 * so the manual page cannot drift from the options. The build writes it into
 * build/man/autoprof.1; `make install` installs it.
 */
#include "autoprof/troff.h"
#include <stdio.h>
#include <string.h>

#include "autoprof/env.h"
#include "launcher.h"

/* The variables of others the programs read: name, reader, what for. */
static const char *const others[][3] = {
#define OTHER(name, who, help) {name, who, help},
    AUTOPROF_OTHER_ENV_TABLE(OTHER)
#undef OTHER
};

static const char *const head[] = {
    ".TH AUTOPROF 1 \"\" \"autoprof\" \"User Commands\"",
    ".nh",
    ".ad l",
    ".SH NAME",
    "autoprof \\- profile a program with LD_PRELOAD and write perf.data",
    ".SH SYNOPSIS",
    ".B autoprof",
    "[\\fIoptions\\fR] [\\fB\\-\\-\\fR] \\fIcommand\\fR [\\fIargs\\fR...]",
    ".br",
    ".B LD_PRELOAD=\\fI/path/to/libautoprof.so\\fB \\fIcommand\\fR [\\fIargs\\fR...]",
    ".br",
    ".B autoprof list",
    "[\\fIfilter\\fR]",
    ".br",
    ".B autoprof ctl",
    "[\\fB\\-t\\fR] \\fIPID\\fR \\fBstart\\fR|\\fBstop\\fR|\\fBdump\\fR|\\fBstatus\\fR",
    ".br",
    ".B autoprof",
    "[\\fIoptions\\fR] \\fB\\-p\\fR|\\fB\\-t\\fR \\fIID\\fR[,\\fIID\\fR...] "
    "[\\fB\\-\\-duration\\fR \\fISECONDS\\fR]",
    ".br",
    ".B autoprof top",
    "[\\fIoptions\\fR] \\fB\\-p\\fR \\fIPID\\fR | [\\fB\\-\\-\\fR] \\fIcommand\\fR "
    "[\\fIargs\\fR...]",
    ".br",
    ".B autoprof merge",
    "\\fB\\-o\\fR \\fIOUT\\fR \\fIFILE\\fR [\\fIFILE\\fR...]",
    ".SH DESCRIPTION",
    ".B autoprof",
    "injects",
    ".I libautoprof.so",
    "into \\fIcommand\\fR and every process it starts, samples their user stacks with",
    "per-thread perf events (or CPU-time timers where perf_event_open is refused),",
    "and writes standard perf.data files that",
    ".BR perf\\-report (1),",
    ".BR perf\\-script (1),",
    "hotspot and",
    ".BR autoprof\\-report (1)",
    "read. The counter totals go into \\fIFILE\\fB.stat\\fR beside the profile, a",
    "file as \\fBperf stat record\\fR writes it: read it with",
    "\\fBperf stat report \\-i\\fR \\fIFILE\\fB.stat\\fR; autoprof\\-report finds it itself.",
    ".PP",
    "One run writes one file, as \\fBperf record\\fR does: every process and every program",
    "exec'd in the run, merged at the end from the files the library writes one per",
    "process image; the launcher names it with its samples and each process image in it",
    "with its pid, samples and command. \\fB\\-\\-per\\-process\\fR keeps one file per image",
    "(as a run without the launcher writes them; \\fBautoprof\\-report \\-\\-list\\fR lists",
    "them), and so do \\fB\\-\\-window\\fR and an \\fB\\-o\\fR with %p.",
    "A statically linked command or a Go program (which the library cannot enter or",
    "sample) is profiled from outside, as \\fBperf record\\fR does: the launcher opens the",
    "events on it before its exec and writes the same file; one line says which mode",
    "was used and why.",
    ".SH OPTIONS",
    "Each option sets the environment variable shown; the variables work without",
    "the launcher too.",
};

static const char *const tail[] = {
    ".SH CONTROL OF A RUNNING PROCESS",
    ".B autoprof ctl",
    "\\fIPID\\fR \\fBstart\\fR|\\fBstop\\fR|\\fBdump\\fR|\\fBstatus\\fR turns sampling of a "
    "process",
    "running with the library on or off (\\fB\\-\\-start\\-paused\\fR, AUTOPROF_START=0, starts it",
    "off), writes every thread's buffered samples so the file is a complete perf.data",
    "(\\fBdump\\fR), or says whether sampling is on, for how long, how many samples and",
    "where the file is (\\fBstatus\\fR); \\fB\\-t\\fR prints how long the request took. The",
    "request travels on the library's own sampling signal, with a token from the process's",
    "endpoint file in \\fI$XDG_RUNTIME_DIR/autoprof/PID\\fR (or \\fI/tmp/autoprof\\-UID/PID\\fR).",
    "A program profiled from outside (\\fB\\-\\-outside\\fR, static and Go programs, \\fB\\-p\\fR) "
    "is",
    "controlled the same way: the launcher answers for it, and \\fIPID\\fR is the program's",
    "or the launcher's own.",
    "With \\fB\\-\\-window\\fR \\fIDURATION\\fR each window of time gets a complete file of its",
    "own, named by its UTC start so the names sort by time, and \\fB\\-\\-keep\\fR \\fIN\\fR keeps",
    "the newest \\fIN\\fR; \\fB\\-\\-on\\-window\\fR \\fICMD\\fR runs \\fICMD FILE\\fR for each "
    "finished one.",
    ".SH LIVE VIEW",
    ".B autoprof top",
    "shows the hottest functions of a command or of \\fB\\-p\\fR \\fIPID\\fR, as",
    ".BR perf\\-top (1)",
    "does, refreshed every second: \\fBt\\fR sorts by total, \\fBs\\fR by self, \\fBq\\fR or",
    "Ctrl\\-C quits. It samples from outside (as \\fB\\-p\\fR does) and writes no file unless",
    "\\fB\\-o\\fR names one (doc/top.md).",
    ".SH EVENTS",
    "\\fB\\-e\\fR and \\fB\\-\\-counters\\fR take event names as",
    ".BR perf (1)",
    "spells them: its hardware and software events, the generic cache events",
    "(\\fBL1\\-dcache\\-load\\-misses\\fR, \\fBLLC\\-loads\\fR, \\fBdTLB\\-load\\-misses\\fR, "
    "...),",
    "raw codes (\\fBr\\fINNNN\\fR), and this CPU's own PMU events through libpfm4",
    "(\\fBINST_RETIRED.ANY\\fR, \\fBMEM_LOAD_RETIRED.L3_MISS:c=2\\fR, "
    "\\fIpmu\\fB::\\fIEVENT\\fB:\\fIUMASK\\fR),",
    "each with perf's modifiers \\fB:u\\fR, \\fB:k\\fR and \\fB:p\\fR.",
    "In \\fB\\-\\-counters\\fR, \\fB{\\fIa\\fB,\\fIb\\fB}\\fR counts a group, scheduled together",
    "on the PMU; a multiplexed counter is scaled by its time enabled over time running, and",
    "\\fB\\-\\-stat\\fR shows the share of time it ran.",
    ".B autoprof list",
    "[\\fIfilter\\fR] prints every name these options take.",
    ".SH FILES",
    ".TP",
    ".I perf.data",
    "the run's profile (\\fB\\-o\\fR). Without the launcher, with \\fB\\-\\-per\\-process\\fR, or",
    "while the run goes on: the first process's profile; a descendant writes",
    "\\fIperf.data.PID\\fR, the program a process execs \\fIperf.data.PID.N\\fR;",
    "\\fBautoprof merge \\-o\\fR \\fIOUT\\fR \\fIperf.data\\fR merges them into one.",
    ".TP",
    ".I perf.data.stat",
    "the counter totals of the run (\\fBperf stat report \\-i\\fR reads it).",
    ".SH EXIT STATUS",
    "The command's own: the launcher ends as the command ended (same status, same",
    "signal). 127 when the command cannot be found, 126 when it cannot be run, 2",
    "for a usage error or a bad option value (nothing is run then).",
    ".SH SEE ALSO",
    ".BR autoprof\\-report (1),",
    ".BR perf\\-record (1),",
    ".BR perf\\-report (1),",
    ".BR perf\\-script (1),",
    ".BR perf\\-stat (1)",
};

/* Print autoprof(1) as troff on @f: the options and variables from env.h's table. */
void man__print(FILE *f)
{
	size_t nrows;
	const struct launcher_row *rows = launcher__rows(&nrows);

	for (size_t i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		fprintf(f, "%s\n", head[i]);
	for (size_t i = 0; i < nrows; i++) {
		const struct launcher_row *r = &rows[i];

		if (!r->long_flag)
			continue;
		troff_option(f, r->short_flag, r->long_flag, r->arg);
		troff_put(f, r->help);
		fputs(".\n.br\n", f);
		fprintf(f, "Variable \\fB%s\\fR", r->var);
		if (*r->def) {
			fputs(", default \\fB", f);
			troff_put(f, r->def);
			fputs("\\fR", f);
		}
		fputs(".\n", f);
	}
	troff_option(f, 0, "outside", NULL);
	fputs("Profile the command from outside (the launcher opens the events, as perf record "
	      "does) even where the library could enter it: threads made with a raw clone are "
	      "sampled too. See doc/outside.md for what applies in this mode.\n",
	      f);
	troff_option(f, 'p', "pid", "PID[,PID...]");
	fputs("Profile running processes, every thread and the threads they make after, "
	      "until Ctrl-C, \\fB\\-\\-duration\\fR or their end.\n",
	      f);
	troff_option(f, 't', "tid", "TID[,TID...]");
	fputs("Profile running threads (and the threads they make after).\n", f);
	troff_option(f, 0, "duration", "SECONDS");
	fputs("With \\fB\\-p\\fR or \\fB\\-t\\fR: stop after this long.\n", f);
	fputs(".TP\n.BR \\-h \", \" \\-\\-help\nPrint the options and exit.\n", f);
	troff_option(f, 0, "version", NULL);
	fputs("Print the version and exit.\n", f);
	fputs(".SH ENVIRONMENT\nBesides the variables above (which work without the launcher "
	      "too), the launcher and the library read or set these:\n",
	      f);
	for (size_t i = 0; i < nrows; i++) {
		if (rows[i].long_flag || rows[i].who == AP_READ_REPORT)
			continue;
		fprintf(f, ".TP\n.B %s\n", rows[i].var);
		troff_put(f, rows[i].help);
		fputs(".\n", f);
	}
	fputs(".PP\nThey also read these variables of others (autoprof\\-report(1) lists its "
	      "own):\n",
	      f);
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (!strcmp(others[i][1], "autoprof-report"))
			continue; /* in autoprof-report(1) */
		fprintf(f, ".TP\n.B %s\n", others[i][0]);
		troff_put(f, others[i][2]);
		fputs(" (", f);
		troff_put(f, others[i][1]);
		fputs(").\n", f);
	}
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		fprintf(f, "%s\n", tail[i]);
}
