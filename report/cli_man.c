// SPDX-License-Identifier: MIT
/*
 * cli_man.c - autoprof-report(1), printed as troff by the hidden --man from
 * cli_options[] (the rows --help prints), so the manual page cannot drift
 * from the options. The build writes it into build/man/autoprof-report.1.
 */
#include "autoprof/env.h"
#include "autoprof/troff.h"
#include "cli.h"

/* The variables autoprof-report reads: its own from env.h's table, then others'. */
static void man_environment(FILE *out)
{
#define REPORT_ROW(id, who, lf, sf, arg, def, help)                                                \
	{AUTOPROF_ENV_PREFIX #id, def, help, AP_READ_##who},
	static const struct {
		const char *var, *def, *help;
		enum ap_env_who who;
	} rows[] = {AUTOPROF_ENV_TABLE(REPORT_ROW)};
#undef REPORT_ROW
#define OTHER_ROW(name, who, help) {name, who, help},
	static const char *const others[][3] = {AUTOPROF_OTHER_ENV_TABLE(OTHER_ROW)};
#undef OTHER_ROW

	fputs(".SH ENVIRONMENT\n", out);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		if (rows[i].who != AP_READ_REPORT)
			continue;
		fprintf(out, ".TP\n.B %s\n", rows[i].var);
		troff_put(out, rows[i].help);
		if (*rows[i].def) {
			fputs(" (default ", out);
			troff_put(out, rows[i].def);
			fputs(")", out);
		}
		fputs(".\n", out);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		if (!strstr(others[i][1], PROG))
			continue;
		fprintf(out, ".TP\n.B %s\n", others[i][0]);
		troff_put(out, others[i][2]);
		fputs(".\n", out);
	}
}

/*
 * Text for troff: backslashes as \e, '-' as \-, a leading '.' or '\'' made
 * literal, a break point after each comma; a '\n' in @s starts a new line.
 */
static const char *const tail[] = {
    ".SH FILES",
    ".TP",
    ".I FILE.stat",
    "The counter totals autoprof keeps beside the profile \\fIFILE\\fR (a",
    "\\fBperf stat record\\fR file); read with \\fIFILE\\fR and shown under Counters.",
    ".SH EXIT STATUS",
    "0 when the report was printed, 1 for an unreadable or malformed input (or an",
    "output that could not be written), 2 for a usage error.",
    ".SH SEE ALSO",
    ".BR autoprof (1),",
    ".BR perf\\-report (1),",
    ".BR perf\\-script (1),",
    ".BR perf\\-stat (1)",
};

/* Print autoprof-report(1) as troff on @out, the OPTIONS section from cli_options[]. */
void cli_man__print(FILE *out)
{
	const char *p;

	fprintf(
	    out,
	    ".TH AUTOPROF\\-REPORT 1 \"\" \"autoprof\" \"User Commands\"\n.nh\n.ad l\n.SH NAME\n"
	    "autoprof\\-report \\- summarise perf.data profiles written by autoprof or "
	    "perf record\n.SH SYNOPSIS\n");
	for (p = cli_synopsis; *p;) {
		size_t len = strcspn(p, "\n");
		size_t prog = strlen(PROG);

		fputs(".B ", out);
		troff_put(out, PROG);
		fputc('\n', out);
		if (len > prog) {
			char line[256];

			snprintf(line, sizeof(line), "%.*s", (int)(len - prog - 1), p + prog + 1);
			troff_put(out, line);
			fputc('\n', out);
		}
		p += len + (p[len] == '\n');
		if (*p)
			fputs(".br\n", out);
	}
	fputs(".SH DESCRIPTION\n", out);
	troff_put(out, cli_description);
	fputs("\n.SH OPTIONS\n", out);
	for (size_t i = 0; i < cli_nr_options; i++) {
		const struct cli_option *o = &cli_options[i];

		if (!o->name) {
			if (o->help[0]) {
				fputs(".SS \"", out);
				troff_put(out, o->help);
				fputs("\"\n", out);
			}
			continue;
		}
		if (!o->help)
			continue; /* an alias, or --man itself */
		troff_option(out, o->key < 256 ? o->key : 0, o->name, o->arg);
		for (p = o->help; *p;) {
			size_t len = strcspn(p, "\n");
			char line[512];

			snprintf(line, sizeof(line), "%.*s", (int)len, p);
			troff_put(out, line);
			fputc('\n', out);
			p += len + (p[len] == '\n');
		}
	}
	man_environment(out);
	for (size_t i = 0; i < sizeof(tail) / sizeof(tail[0]); i++)
		fprintf(out, "%s\n", tail[i]);
}
