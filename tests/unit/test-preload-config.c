/* Unit test: AUTOPROF_* parsing (common/options.c). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

static const char *vars[] = {"AUTOPROF_OUTPUT", "AUTOPROF_EVENT",     "AUTOPROF_FREQ",
			     "AUTOPROF_PERIOD", "AUTOPROF_CALLGRAPH", "AUTOPROF_STACK_DEPTH",
			     "AUTOPROF_SIGNAL", "AUTOPROF_VERBOSE",   "AUTOPROF_QUIET",
			     "AUTOPROF_START",	"AUTOPROF_WINDOW",    "AUTOPROF_KEEP"};

static void reset(void)
{
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	setenv("AUTOPROF_QUIET", "1", 1); /* the expected warnings stay off the TAP stream */
}

static int parse_with(const char *var, const char *value, struct ap_config *cfg)
{
	reset();
	if (var)
		setenv(var, value, 1);
	return options__parse(cfg);
}

int main(void)
{
	struct ap_config cfg;
	struct ap_event ev;
	char why[256];

	plan(42);

	ok(parse_with(NULL, NULL, &cfg) == 0, "defaults parse");
	ok(!strcmp(cfg.output, "perf.data"), "default output is perf.data");
	ok(cfg.event_auto && !strcmp(cfg.event_name, "cycles"), "default event is cycles, auto");
	ok(cfg.freq == 1000 && cfg.period == 0, "default frequency is 1000 Hz");
	ok(cfg.callgraph == AP_CG_LIBUNWIND, "default call graph is libunwind");
	ok(cfg.stack_depth == 127, "default stack depth is 127");
	ok(cfg.signo == SIGPROF, "default signal is SIGPROF");

	ok(cfg.start && !cfg.window_ns && !cfg.keep,
	   "default: sampling from the start, no windows");
	ok(parse_with("AUTOPROF_START", "0", &cfg) == 0 && !cfg.start, "AUTOPROF_START=0");
	ok(parse_with("AUTOPROF_WINDOW", "500ms", &cfg) == 0 && cfg.window_ns == 500000000ULL,
	   "AUTOPROF_WINDOW=500ms");
	ok(parse_with("AUTOPROF_WINDOW", "10", &cfg) == 0 && cfg.window_ns == 10000000000ULL,
	   "AUTOPROF_WINDOW=10 is seconds");
	ok(parse_with("AUTOPROF_WINDOW", "1.5m", &cfg) == 0 && cfg.window_ns == 90000000000ULL,
	   "AUTOPROF_WINDOW=1.5m");
	ok(parse_with("AUTOPROF_WINDOW", "1h", &cfg) == 0 && cfg.window_ns == 3600000000000ULL,
	   "AUTOPROF_WINDOW=1h");
	ok(parse_with("AUTOPROF_WINDOW", "50ms", &cfg) == -EINVAL,
	   "a window below 100 ms is refused");
	ok(parse_with("AUTOPROF_WINDOW", "8d", &cfg) == -EINVAL, "an unknown unit is refused");
	ok(parse_with("AUTOPROF_WINDOW", "-1s", &cfg) == -EINVAL, "a negative window is refused");
	ok(parse_with("AUTOPROF_KEEP", "24", &cfg) == 0 && cfg.keep == 24, "AUTOPROF_KEEP=24");
	ok(parse_with("AUTOPROF_KEEP", "x", &cfg) == -EINVAL, "AUTOPROF_KEEP=x is refused");
	ok(parse_with("AUTOPROF_FREQ", "abc", &cfg) == -EINVAL, "AUTOPROF_FREQ=abc is refused");
	ok(parse_with("AUTOPROF_FREQ", "-5", &cfg) == -EINVAL, "a negative frequency is refused");
	ok(parse_with("AUTOPROF_FREQ", "0", &cfg) == -EINVAL, "a zero frequency is refused");
	ok(parse_with("AUTOPROF_FREQ", "4000", &cfg) == 0 && cfg.freq == 4000,
	   "AUTOPROF_FREQ=4000 is taken");
	ok(parse_with("AUTOPROF_PERIOD", "250000", &cfg) == 0 && cfg.period == 250000 &&
	       cfg.freq == 0,
	   "AUTOPROF_PERIOD overrides the frequency");
	ok(parse_with("AUTOPROF_STACK_DEPTH", "-1", &cfg) == -EINVAL,
	   "a negative depth is refused");
	ok(parse_with("AUTOPROF_STACK_DEPTH", "2000", &cfg) == -EINVAL,
	   "a depth above 1024 is refused");
	ok(parse_with("AUTOPROF_CALLGRAPH", "fp", &cfg) == 0 && cfg.callgraph == AP_CG_FP,
	   "AUTOPROF_CALLGRAPH=fp");
	ok(parse_with("AUTOPROF_CALLGRAPH", "lbr", &cfg) == -EINVAL,
	   "an unknown call graph is refused");
	ok(parse_with("AUTOPROF_EVENT", "task-clock", &cfg) == 0 && !cfg.event_auto &&
	       cfg.event.type == PERF_TYPE_SOFTWARE && cfg.event.config == PERF_COUNT_SW_TASK_CLOCK,
	   "AUTOPROF_EVENT=task-clock");
	ok(parse_with("AUTOPROF_EVENT", "bogus-event", &cfg) == -EINVAL,
	   "an unknown event is refused");
	ok(events__parse("r1c2", &ev, why, sizeof(why)) == 0 && ev.type == PERF_TYPE_RAW &&
	       ev.config == 0x1c2,
	   "rNNNN is a raw event code");
	ok(events__parse("cs", &ev, why, sizeof(why)) == 0 &&
	       ev.config == PERF_COUNT_SW_CONTEXT_SWITCHES,
	   "aliases work (cs)");
	ok(events__parse("rxyz", &ev, why, sizeof(why)) == -ENOENT && why[0],
	   "r with no hex is no event, and says why");
	ok(parse_with("AUTOPROF_SIGNAL", "PROF", &cfg) == 0 && cfg.signo == SIGPROF,
	   "AUTOPROF_SIGNAL=PROF");
	ok(parse_with("AUTOPROF_SIGNAL", "SIGRTMIN+2", &cfg) == 0 && cfg.signo == SIGRTMIN + 2,
	   "AUTOPROF_SIGNAL=SIGRTMIN+2");
	ok(parse_with("AUTOPROF_SIGNAL", "9", &cfg) == -EINVAL, "SIGKILL can never be ours");
	ok(parse_with("AUTOPROF_SIGNAL", "SEGV", &cfg) == -EINVAL,
	   "SIGSEGV is refused by name too");
	ok(parse_with("AUTOPROF_OUTPUT", "/tmp/x.%p.data", &cfg) == 0 &&
	       !strcmp(cfg.output, "/tmp/x.%p.data"),
	   "the output pattern is kept for the session to expand");
	ok(parse_with("AUTOPROF_VERBOSE", "yes", &cfg) == 0 && cfg.verbose == 1,
	   "AUTOPROF_VERBOSE=yes is level 1");
	{
		char said[256];

		log__capture(said, sizeof(said));
		ok(parse_with("AUTOPROF_VERBOSE", "no", &cfg) == 0 && cfg.verbose == 0 && !said[0],
		   "AUTOPROF_VERBOSE=no is level 0, without a warning (%s)", said);
		ok(parse_with("AUTOPROF_VERBOSE", "2", &cfg) == 0 && cfg.verbose == 2,
		   "AUTOPROF_VERBOSE=2 is level 2");
		ok(parse_with("AUTOPROF_VERBOSE", "12", &cfg) == -EINVAL && strstr(said, "0 to 9"),
		   "AUTOPROF_VERBOSE=12 is refused: %s", said);
		log__capture(said, sizeof(said));
		ok(parse_with("AUTOPROF_VERBOSE", "loud", &cfg) == -EINVAL &&
		       strstr(said, "'loud' is not a level from 0 to 9, nor yes or no"),
		   "AUTOPROF_VERBOSE=loud is refused: %s", said);
		log__capture(NULL, 0);
	}
	return tap_done();
}
