// SPDX-License-Identifier: MIT
/*
 * session.c - read one or more perf.data files into one report: the driver
 * above the stages (read -> model -> aggregate), whose result the views show.
 *
 * Two passes over the records of every file:
 *  1. count LOST/THROTTLE/unknown records and collect the side-band records
 *     (MMAP, MMAP2, COMM, FORK) with their times; sort those by time (time 0
 *     first: perf synthesizes the initial state at time 0) and apply them to
 *     the machine (sideband.c). Ordering in the file never matters this way.
 *  2. resolve and count every SAMPLE against the complete machine (samples.c).
 * Only the side-band records are kept in memory; samples are streamed into
 * the stack trie (stacks.c), then per-function totals are computed once.
 * Counters (STAT records) are summed in pass 1.
 * A single file is read in (mostly) one walk instead, with the same result:
 * see onewalk.c.
 */
#include "driver/driver.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/utsname.h>

int session__init(struct session *s)
{
	memset(s, 0, sizeof(*s));
	s->first_time = UINT64_MAX;
	return hists__init(&s->hists);
}

/* Queue a warning for main() to print; quietly counts the ones past MAX_WARNINGS. */
void session__warn(struct session *s, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (s->nr_warnings == MAX_WARNINGS) {
		s->dropped_warnings++;
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) >= 0)
		s->warnings[s->nr_warnings++] = msg;
	va_end(ap);
}

static int fail(struct session *s, int err, const char *path, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", path, what);
	return err;
}

/* Name each attr (EVENT_DESC, else from type/config) and give it its event's counters. */
int session__name_attrs(struct session *s, struct perf_file *pf)
{
	size_t i;

	for (i = 0; i < pf->nr_attrs; i++) {
		struct evattr *ea = &pf->attrs[i];

		if (!ea->name)
			ea->name = evname__from_attr(&ea->attr);
		if (!ea->name)
			return -ENOMEM;
		ea->hist = hists__findnew_event(&s->hists, ea->name);
		if (ea->hist < 0)
			return ea->hist;
		memory_events__note_mark(s, pf, ea->name); /* memory asked for, not recorded */
		ea->lbr_calls = (ea->attr.sample_type & PERF_SAMPLE_BRANCH_STACK) &&
				(ea->attr.sample_type & PERF_SAMPLE_CALLCHAIN) &&
				(ea->attr.branch_sample_type & PERF_SAMPLE_BRANCH_CALL_STACK);
		if ((ea->attr.sample_type & PERF_SAMPLE_READ) &&
		    (ea->attr.read_format & PERF_FORMAT_GROUP) && !s->read_noted) {
			s->read_noted = true;
			session__warn(s,
				      "%s: event %s samples its group's counters (perf record "
				      "-e '{...}:S'): only its own samples are counted; the "
				      "values read for the group's other events are not "
				      "(perf report shows them as their own events)",
				      pf->path, ea->name);
		}
		if ((ea->attr.sample_type & PERF_SAMPLE_BRANCH_STACK) && !ea->lbr_calls &&
		    !s->branch_noted) {
			s->branch_noted = true;
			session__warn(s,
				      "%s: event %s has branch stacks (perf record -b/-j): "
				      "not shown; the views count samples as perf report "
				      "--no-branch-stack does",
				      pf->path, ea->name);
		}
	}
	return 0;
}

/*
 * With many files, the objects take a file's build ids as it is added and
 * the file keeps only the kernel's (sideband.c's kallsyms look for them): a
 * day of windows names the same objects in every file. The first file keeps
 * its own (one walk of a lone file may build the machine again).
 */
static int take_build_ids(struct session *s, struct perf_file *pf)
{
	int err = 0;
	size_t i, k;

	/* in file order, as sideband__build_machine() gives them (the first one holds) */
	for (i = pf == &s->files[1] ? 0 : 1; i < 2 && !err; i++) {
		const struct features *f = i ? &pf->feat : &s->files[0].feat;

		for (k = 0; k < f->nr_build_ids && !err; k++)
			err = dsos__set_build_id(&s->machine.dsos, f->build_ids[k].path,
						 strlen(f->build_ids[k].path), f->build_ids[k].hex);
	}
	features__drop_build_ids(&pf->feat, true);
	return err;
}

static void sides_free(struct sides *sd)
{
	free(sd->v);
	free(sd->bytes);
	kvmap__exit(&sd->kept);
	memset(sd, 0, sizeof(*sd));
}

/* Add the file @path, or the @len bytes at @buf named @path if @buf is not NULL. */
static int add_file(struct session *s, const char *path, const void *buf, size_t len)
{
	struct perf_file *pf;
	char warn[256];
	int err;

	if (array__reserve(&s->files, &s->cap_files, s->nr_files + 1, sizeof(*s->files)))
		return fail(s, -ENOMEM, path, "out of memory");
	pf = &s->files[s->nr_files];
	err = buf ? perf_file__open_mem(pf, path, buf, len) : perf_file__open(pf, path);
	if (err) {
		fail(s, err, path, perf_file__error(pf));
		perf_file__close(pf);
		return err;
	}
	s->nr_files++;
	if (pf->warn)
		session__warn(s, "%s: %s", path, pf->warn);
	err = features__read(pf, warn, sizeof(warn));
	if (err == -ENOMEM)
		return fail(s, err, path, "out of memory");
	if (err)
		session__warn(s, "%s: %s", path, warn);
	if (!pf->pipe && pf->feat.has_comp) {
		/* perf record -z: the data section expanded into plain records */
		err = stream__expand(pf, pf->data_off, pf->data_end);
		if (err)
			return fail(s, err, path, perf_file__error(pf));
		if (pf->warn)
			session__warn(s, "%s: %s", path, pf->warn);
	}
	err = session__name_attrs(s, pf);
	if (!err && s->nr_files > 1)
		err = take_build_ids(s, pf);
	if (err)
		return fail(s, err, path, "out of memory");
	if (s->many && s->nr_scanned + 1 == s->nr_files) {
		/* pass 1 now, while its pages are mapped (session__process() does the rest) */
		u64 pos = pf->data_off;

		err = sideband__scan_file(s, (u32)(s->nr_files - 1), &s->sides, &pos, 0);
		if (err)
			return s->err[0] ? err : fail(s, err, path, "out of memory");
		s->nr_scanned++;
	}
	/* its records are read later (a day of windows would otherwise hold every
	 * file's pages at once) */
	perf_file__release(pf);
	return 0;
}

int session__reserve(struct session *s, size_t nr)
{
	if (nr > 1 && !s->nr_files)
		s->many = s->sides.copy = true;
	return array__reserve(&s->files, &s->cap_files, nr, sizeof(*s->files));
}

/*
 * Open and validate @path and add it to the report. Returns 0, or -errno
 * with "path: reason" in s->err. Recoverable problems become warnings.
 */
int session__add_file(struct session *s, const char *path)
{
	int err;

	if (stat_sibling__seen(s, path))
		return 0; /* FILE.stat named too (perf.data*): its totals are counted once */
	err = add_file(s, path, NULL, 0);
	if (!err)
		err = stat_sibling__read(s, (u32)(s->nr_files - 1));
	if (err == -ENOMEM)
		return fail(s, err, path, "out of memory");
	return err;
}

/* As session__add_file() for @len bytes at @buf, which must outlive the session. */
int session__add_buffer(struct session *s, const char *name, const void *buf, size_t len)
{
	return add_file(s, name, buf, len);
}

static void warn_totals(struct session *s)
{
	if (s->aux_records)
		session__warn(s,
			      "%llu AUXTRACE records (%llu bytes of AUX-area trace data: Intel PT, "
			      "BTS, CoreSight, SPE) not decoded%s: perf report --itrace would "
			      "synthesize samples from them; these numbers count the sampled "
			      "records only",
			      (unsigned long long)s->aux_records, (unsigned long long)s->aux_bytes,
			      s->aux_truncated ? " (and some were truncated when recorded)" : "");
	if (s->guest_samples)
		session__warn(s,
			      "%llu guest samples (perf kvm record) are shown as [unknown]: guest "
			      "kernels and programs are not resolved",
			      (unsigned long long)s->guest_samples);
	if (s->unknown_id)
		session__warn(s, "%llu samples with an id not present in the header were skipped",
			      (unsigned long long)s->unknown_id);
	if (s->bad_samples)
		session__warn(s, "%llu malformed samples were skipped",
			      (unsigned long long)s->bad_samples);
	if (unwind_dwarf__failed(s->unwinder))
		session__warn(s, "%llu dwarf samples had no user stack beyond the sampled address",
			      (unsigned long long)unwind_dwarf__failed(s->unwinder));
	if (s->bad_records)
		session__warn(s, "%llu malformed records were skipped",
			      (unsigned long long)s->bad_records);
	if (s->unknown_records)
		session__warn(s, "%llu records of unknown type (%u%s%s) were skipped",
			      (unsigned long long)s->unknown_records, s->unknown_types[0],
			      s->unknown_types[1] ? ", " : "", s->unknown_types[1] ? "..." : "");
}

/* Processes and threads that have samples. */
static int count_tasks(struct session *s)
{
	struct kvmap pids = {0};
	struct kvmap tids = {0};
	size_t i;
	int err = 0;

	for (i = 0; i < s->hists.stacks.nr_tasks && !err; i++) {
		err = kvmap__put(&pids, s->hists.stacks.tasks[i].pid, 0, 0);
		if (!err)
			err = kvmap__put(&tids, s->hists.stacks.tasks[i].tid, 0, 0);
	}
	s->nr_procs_seen = pids.nr;
	s->nr_threads_seen = tids.nr;
	kvmap__exit(&pids);
	kvmap__exit(&tids);
	return err;
}

/*
 * The samples the records stand for: per event with one sample period in
 * every file, its total period over that period when the records carry more
 * than 1.1 periods each on average (autoprof's aggregated files merge a
 * stack's samples into one record); else its records.
 */
static void count_stands_for(struct session *s)
{
	size_t h, i, j;

	s->stands_for = 0;
	for (h = 0; h < s->hists.nr; h++) {
		u64 period = 0, n = s->hists.v[h].nr_samples;
		bool fixed = n > 0;

		if (memory_names__derived(s->hists.v[h].event))
			continue; /* alloc-objects, live-objects: the same records again */
		fixed = fixed && !event_units__wall(s->hists.v[h].event); /* a record is a wait */
		for (i = 0; i < s->nr_files && fixed; i++) {
			for (j = 0; j < s->files[i].nr_attrs && fixed; j++) {
				const struct evattr *ea = &s->files[i].attrs[j];

				if (ea->hist != (int)h)
					continue;
				u64 p = merged_counts__sample_period(&ea->attr);

				if (!p || (period && period != p))
					fixed = false;
				period = p;
			}
		}
		if (fixed && period && s->hists.v[h].total_period / period > n + n / 10)
			n = (s->hists.v[h].total_period + period / 2) / period;
		s->stands_for += n;
	}
	if (s->stands_for < s->nr_samples)
		s->stands_for = s->nr_samples;
}

/* Add file @pf's losses and the share of its records read to the session's totals. */
static void account_file(struct session *s, const struct perf_file *pf)
{
	u64 off = pf->orig_end ? pf->orig_off : pf->data_off;
	u64 end = pf->orig_end ? pf->orig_end : pf->data_end, total = end > off ? end - off : 0;
	u64 read = total;

	s->lost_total += pf->lost > pf->lost_samples ? pf->lost : pf->lost_samples;
	if (pf->stop_at)
		read = pf->stop_at - off;
	else if (pf->walk_end < pf->data_end) /* stopped in an expanded stream: its share */
		read = (u64)((double)total * (double)(pf->walk_end - pf->data_off) /
			     (double)(pf->data_end - pf->data_off));
	s->data_bytes += total;
	s->read_bytes += read;
}

/*
 * Run both passes over every added file. Returns 0 or -ENOMEM (with s->err
 * set); problems in the data become warnings.
 */
int session__process(struct session *s)
{
	struct sides *sd = &s->sides;
	bool spec = !s->nr_scanned && onewalk__fits(s);
	size_t i;
	int err = 0, done = 0;
	u64 pos;

	/* --focus, --hide...: the stack filter (aggregate/aim.c) */
	s->hists.aim = s->opts.aim;
	if (spec) /* pass 1 of the one file (0), and maybe pass 2 (1) */
		err = done = onewalk__process(s, sd);
	/* Many files (a day of windows) hold their pages only while read, and their
	 * side-band records are copied in pass 1 (sideband.c); the files added
	 * after session__reserve() had their pass 1 as they were added */
	sd->copy = sd->copy || (s->nr_files > 1 && !spec);
	for (i = s->nr_scanned; i < s->nr_files && !err && !spec; i++) {
		pos = s->files[i].data_off;
		err = sideband__scan_file(s, (u32)i, sd, &pos, 0);
		if (s->nr_files > 1)
			perf_file__release(&s->files[i]);
	}
	if (!err && !done)
		err = sideband__build_machine(s, sd);
	for (i = 0; i < s->nr_files && !err && !done; i++) {
		err = samples__file(s, &s->files[i], UINT64_MAX);
		if (s->nr_files > 1)
			perf_file__release(&s->files[i]);
	}
	if (err > 0)
		err = 0;
	sides_free(sd);
	for (i = 0; i < s->nr_files; i++)
		account_file(s, &s->files[i]);
	if (!err)
		merged_counts__apply(s); /* aggregated files: samples, not records */
	if (!err)
		err = hists__finish(&s->hists);
	if (!err)
		err = counters__finish(&s->counters);
	if (!err)
		err = count_tasks(s);
	if (!err)
		count_stands_for(s);
	if (err) {
		if (!s->err[0])
			snprintf(s->err, sizeof(s->err), "%s", strerror(-err));
		return err;
	}
	warn_totals(s);
	if (!s->nr_samples && s->unknown_records) {
		/* nothing read but records we cannot read: no silent empty report */
		snprintf(s->err, sizeof(s->err),
			 "no samples read, and %llu records of a type not supported (%u) "
			 "were skipped",
			 (unsigned long long)s->unknown_records, s->unknown_types[0]);
		return -ENOTSUP;
	}
	return 0;
}

/*
 * The hist the views show: the event named @event, else the first with
 * samples, else 0. Returns -1 if @event names no event.
 */
int session__main_hist(const struct session *s, const char *event)
{
	size_t i;

	for (i = 0; i < s->hists.nr; i++) {
		if (event ? !strcmp(s->hists.v[i].event, event) : s->hists.v[i].nr_samples > 0)
			return (int)i;
	}
	return event ? -1 : 0;
}

bool session__incomplete(const struct session *s)
{
	return s->nr_warnings || s->read_bytes < s->data_bytes;
}

void session__print_gaps(const struct session *s, FILE *out)
{
	size_t i;

	if (s->read_bytes < s->data_bytes)
		fprintf(out,
			"Read:       %.2f%% of the records (%llu of %llu bytes): the numbers "
			"cover that part only\n",
			100.0 * (double)s->read_bytes / (double)s->data_bytes,
			(unsigned long long)s->read_bytes, (unsigned long long)s->data_bytes);
	for (i = 0; i < s->nr_warnings; i++)
		fprintf(out, "Warning:    %s\n", s->warnings[i]);
	if (s->dropped_warnings)
		fprintf(out, "Warning:    %zu more warnings not shown\n", s->dropped_warnings);
}

void session__exit(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nr_files; i++)
		perf_file__close(&s->files[i]);
	free(s->files);
	for (i = 0; i < s->nr_warnings; i++)
		free(s->warnings[i]);
	machine__exit(&s->machine);
	hists__exit(&s->hists);
	unwind_dwarf__free(s->unwinder);
	counters__exit(&s->counters);
	kvmap__exit(&s->stats_read);
	sides_free(&s->sides);
	memset(s, 0, sizeof(*s));
}
