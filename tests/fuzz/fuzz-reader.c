// SPDX-License-Identifier: MIT
/*
 * fuzz-reader.c - libFuzzer target for the perf.data reader.
 *
 * Each input is read as a perf.data file from memory (session__add_buffer),
 * processed, and rendered by every view into /dev/null, so the header,
 * attr, feature, record, sample, callchain and stack code all see it. Object
 * files and /proc/kallsyms named by the input are never opened (no_load):
 * the fuzzer must not depend on, or be slowed by, the files on this machine.
 *
 *   make build/fuzz/fuzz-reader
 *   build/fuzz/fuzz-reader -max_total_time=60 tests/fuzz/corpus
 */
#include "../../report/driver/session.h"
#include "../../report/view/view.h"

#include <stdint.h>
#include <stdio.h>

static FILE *sink;

static void render_all(struct session *s)
{
	struct report_opts o = {.top = 10, .children = true, .min_pct = 0.5};
	static const struct sort_spec thread_sort = {{SK_PROCESS, SK_COMM, SK_THREAD, SK_DSO}, 4};

	output__print(s, &o, sink);
	o.sort = thread_sort;
	output__print(s, &o, sink);
	o.sort = (struct sort_spec){{SK_FUNC}, 1};
	render_tree(s, &o, sink);
	o.callers = true;
	render_tree(s, &o, sink);
	render_folded(s, &o, sink);
	render_flame(s, &o, sink);
	render_json(s, &o, sink);
	render_pprof(s, &o, sink);
	render_speedscope(s, &o, sink);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct session s;

	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!sink || session__init(&s))
		return 0;
	s.opts.no_load = true;
	if (session__add_buffer(&s, "fuzz.data", data, size) == 0 && session__process(&s) == 0)
		render_all(&s);
	session__exit(&s);
	return 0;
}
