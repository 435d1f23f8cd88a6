/* SPDX-License-Identifier: MIT */
/*
 * env_warn.c - the library's and the launcher's line for each unknown
 * AUTOPROF_* variable of the environment (env_check.c finds them).
 */
#include "common.h"

/* One unknown variable: a line, with the nearest name when there is one. */
static void say(const char *var, int len, const char *hint, void *arg)
{
	(void)arg;
	if (hint)
		pr_warn("unknown variable %.*s; did you mean %s%s?", len, var, AUTOPROF_ENV_PREFIX,
			hint);
	else
		pr_warn("unknown variable %.*s (doc/variables.md lists the AUTOPROF_ variables)",
			len, var);
}

int env_warn__say_unknown(void)
{
	return env_check__each_unknown(false, say, NULL);
}
