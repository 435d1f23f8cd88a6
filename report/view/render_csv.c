// SPDX-License-Identifier: MIT
/*
 * render_csv.c - --csv DIR: the four tables of the classic readperf report,
 * each with a header row:
 *   stat.csv       records per type
 *   overview.csv   every record, in time order (records without a time first,
 *                  in file order)
 *   processes.csv  per process: name, maps, fork and exit time, samples, period
 *   results.csv    per function of the main event: samples, period, source file
 * The overview sorts an index of every record (24 bytes each), built by
 * render_csv__overview_visit() during the session's one walk over the records
 * (attach it with render_csv__overview_attach() before session__process()): the one
 * export whose memory grows with the file, as its output does.
 */
#include "view/view.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

static FILE *open_csv(const char *dir, const char *name, char *err, size_t err_len)
{
	char path[4096];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path)) {
		snprintf(err, err_len, "%s: path too long", dir);
		return NULL;
	}
	f = fopen(path, "we");
	if (!f)
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
	return f;
}

static int close_csv(FILE *f, const char *dir, const char *name, char *err, size_t err_len)
{
	if (ferror(f) | (fclose(f) != 0)) {
		snprintf(err, err_len, "%s/%s: write error", dir, name);
		return -EIO;
	}
	return 0;
}

static void write_stat(const struct session *s, FILE *f)
{
	u32 t;

	fprintf(f, "type,name,count\n");
	for (t = 0; t < PERF_RECORD_LAST_KNOWN; t++) {
		const char *name = evname__record_type(t);

		if (s->type_counts[t])
			fprintf(f, "%u,%s,%llu\n", t, name ? name : "UNKNOWN",
				(unsigned long long)s->type_counts[t]);
	}
	if (s->unknown_records)
		fprintf(f, "-1,UNKNOWN,%llu\n", (unsigned long long)s->unknown_records);
}

/* The record visitor: index record @r of file @file by its time, if it has one. */
int render_csv__overview_visit(void *arg, u32 file, const struct record *r, const struct sample *id)
{
	struct csv_overview *ov = arg;
	bool timed = id && id->has_time;

	if (array__reserve(&ov->v, &ov->cap, ov->nr + 1, sizeof(*ov->v)))
		return -ENOMEM;
	ov->v[ov->nr++] = (struct rec_pos){timed ? id->time : 0, r->off, file, timed};
	return 0;
}

/* Have the session built from @so index its records into @ov for render_csv(). */
void render_csv__overview_attach(struct session_opts *so, struct csv_overview *ov)
{
	so->visit = render_csv__overview_visit;
	so->visit_arg = ov;
}

void render_csv__overview_exit(struct csv_overview *ov)
{
	free(ov->v);
	memset(ov, 0, sizeof(*ov));
}

/* One overview line's "info" column. */
static void record_info(struct session *s, const struct record *r, const struct sample *id,
			size_t body_end, FILE *f)
{
	const u8 *p = r->p;
	size_t fixed = sample__fixed_size(r->h.type);
	char buf[256];
	u32 nr, frames[MAX_FRAMES];

	buf[0] = 0;
	switch (r->h.type) {
	case PERF_RECORD_SAMPLE:
		if (resolver__sample(&s->hists.res, &s->machine, id, frames, &nr) == 0) {
			int at = snprintf(buf, sizeof(buf), "%#llx ", (unsigned long long)id->ip);

			/* a long C++ name cut inside its brackets, not at its end */
			cxxname__fit(s->hists.res.funcs[s->hists.res.locs[frames[0]].fid].name,
				     buf + at, sizeof(buf) - (size_t)at);
		}
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
		snprintf(buf, sizeof(buf), "%.*s", (int)(body_end - fixed),
			 (const char *)p + fixed);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		snprintf(buf, sizeof(buf), "ppid %u ptid %u", REC(struct perf_record_fork, r).ppid,
			 REC(struct perf_record_fork, r).ptid);
		break;
	case PERF_RECORD_LOST:
		snprintf(buf, sizeof(buf), "lost %llu",
			 (unsigned long long)REC(struct perf_record_lost, r).lost);
		break;
	default:
		break;
	}
	escape__csv(f, buf);
}

/* overview.csv from the index the visitor built in pass 1, sorted by time. */
static int write_overview(struct session *s, FILE *f)
{
	struct csv_overview *ov = s->opts.visit_arg;
	struct rec_pos *refs;
	size_t nr, i, body_end;
	struct record r;
	struct sample id;
	u32 *left = NULL; /* many files: each one's records still to write */

	if (s->opts.visit != render_csv__overview_visit || !ov)
		return -EINVAL; /* no render_csv__overview_attach() before session__process() */
	refs = ov->v;
	nr = ov->nr;
	if (nr)
		qsort(refs, nr, sizeof(*refs), rec_pos__cmp);
	if (s->nr_files > 1 && (left = calloc(s->nr_files, sizeof(*left))))
		for (i = 0; i < nr; i++)
			left[refs[i].file]++;
	fprintf(f, "time,file,offset,type,name,pid,tid,cpu,size,info\n");
	for (i = 0; i < nr; i++) {
		struct perf_file *pf = &s->files[refs[i].file];
		const char *name;
		bool ok;

		if (left)
			left[refs[i].file]--;
		if (perf_file__record_at(pf, refs[i].off, &r))
			goto next;
		ok = sample__record_ids(pf, &r, &id, &body_end);
		name = evname__record_type(r.h.type);
		if (refs[i].has_time)
			fprintf(f, "%llu,", (unsigned long long)refs[i].time);
		else
			fprintf(f, ",");
		fprintf(f, "%u,%llu,%u,%s,", refs[i].file, (unsigned long long)refs[i].off,
			r.h.type, name ? name : "UNKNOWN");
		if (ok && id.has_tid)
			fprintf(f, "%d,%d,", (int)id.pid, (int)id.tid);
		else
			fprintf(f, ",,");
		if (ok && id.has_cpu)
			fprintf(f, "%u,", id.cpu);
		else
			fprintf(f, ",");
		fprintf(f, "%u,", r.h.size);
		if (ok)
			record_info(s, &r, &id, body_end, f);
		else
			fprintf(f, "\"\"");
		fprintf(f, "\n");
	next:
		/* a file's pages go back once its last record is written (a day of windows),
		 * and after its records without a time, which come first for every file */
		if (left && (!left[refs[i].file] ||
			     (!refs[i].time && (i + 1 == nr || refs[i + 1].file != refs[i].file))))
			perf_file__release(pf);
	}
	free(left);
	return 0;
}

static int u32_cmp(const void *pa, const void *pb)
{
	u32 a = *(const u32 *)pa, b = *(const u32 *)pb;

	return a < b ? -1 : a > b;
}

static int write_processes(struct session *s, FILE *f)
{
	const struct hists *h = &s->hists;
	const struct machine *m = &s->machine;
	struct kvmap seen = {0};
	u32 *pids;
	size_t nr = 0, i, j;
	int err = 0;

	pids = malloc((m->nr_procs + h->stacks.nr_tasks + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < m->nr_procs + h->stacks.nr_tasks && !err; i++) {
		u32 pid = i < m->nr_procs ? m->procs[i]->pid : h->stacks.tasks[i - m->nr_procs].pid;
		u64 v;

		if (pid == UINT32_MAX || kvmap__get(&seen, pid, 0, &v))
			continue;
		err = kvmap__put(&seen, pid, 0, 0);
		pids[nr++] = pid;
	}
	kvmap__exit(&seen);
	if (nr)
		qsort(pids, nr, sizeof(*pids), u32_cmp);
	fprintf(f, "pid,name,maps,fork_time,exit_time,threads,samples,period\n");
	for (i = 0; i < nr && !err; i++) {
		const struct proc *p = machine__find_proc(m, pids[i]);
		u64 samples = 0, period = 0, threads = 0;

		for (j = 0; j < h->stacks.nr_tasks; j++) {
			if (h->stacks.tasks[j].pid != pids[i])
				continue;
			samples += h->stacks.tasks[j].samples;
			period += h->stacks.tasks[j].period;
			threads++;
		}
		fprintf(f, "%u,", pids[i]);
		escape__csv(f, machine__comm_of(m, pids[i], pids[i]));
		fprintf(f, ",%zu,", p ? p->nr_maps : 0);
		if (p && p->has_fork)
			fprintf(f, "%llu", (unsigned long long)p->fork_time);
		fprintf(f, ",");
		if (p && p->exit_time != TIME_NEVER)
			fprintf(f, "%llu", (unsigned long long)p->exit_time);
		fprintf(f, ",%llu,%llu,%llu\n", (unsigned long long)threads,
			(unsigned long long)samples, (unsigned long long)period);
	}
	free(pids);
	return err;
}

static int write_results(struct session *s, const struct report_opts *o, FILE *f)
{
	static const struct sort_spec by_func = {{SK_FUNC}, 1};
	int hist = session__main_hist(s, o->event);
	const struct hist *hi;
	struct rows rows;
	char src[SRCLINE_MAX];
	size_t i;
	int err;

	fprintf(f, "function,object,self_samples,self_period,self_percent,total_samples,"
		   "total_period,total_percent,source\n");
	if (hist < 0 || (size_t)hist >= s->hists.nr)
		return 0;
	hi = &s->hists.v[hist];
	err = rows__build(&rows, &s->hists, &s->machine, hist, &by_func);
	if (!err) {
		rows__sort(&rows, &s->hists, false);
		for (i = 0; i < rows.nr; i++) {
			const struct row *r = &rows.v[i];

			escape__csv(f, s->hists.res.funcs[r->fid].name);
			fputc(',', f);
			escape__csv(f, s->hists.res.funcs[r->fid].object);
			fprintf(f, ",%llu,%llu,%.4f,%llu,%llu,%.4f,",
				(unsigned long long)r->self_samples,
				(unsigned long long)r->self_period,
				output__pct_of(r->self_period, hi->total_period),
				(unsigned long long)r->total_samples,
				(unsigned long long)r->total_period,
				output__pct_of(r->total_period, hi->total_period));
			output__func_source(s, r->fid, src, sizeof(src));
			escape__csv(f, src);
			fputc('\n', f);
		}
	}
	rows__exit(&rows);
	return err;
}

/*
 * Write the four CSV files into directory @dir (created if missing).
 * Returns 0, or -errno with a message in @err.
 */
int render_csv(struct session *s, const struct report_opts *o, const char *dir, char *err,
	       size_t err_len)
{
	static const char *const names[] = {"stat.csv", "overview.csv", "processes.csv",
					    "results.csv"};
	size_t i;
	int ret = 0;

	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		snprintf(err, err_len, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	for (i = 0; i < ARRAY_SIZE(names) && !ret; i++) {
		FILE *f = open_csv(dir, names[i], err, err_len);

		if (!f)
			return -EIO;
		switch (i) {
		case 0:
			write_stat(s, f);
			break;
		case 1:
			ret = write_overview(s, f);
			break;
		case 2:
			ret = write_processes(s, f);
			break;
		default:
			ret = write_results(s, o, f);
			break;
		}
		if (ret) {
			snprintf(err, err_len, "%s/%s: %s", dir, names[i], strerror(-ret));
			fclose(f);
			return ret;
		}
		ret = close_csv(f, dir, names[i], err, err_len);
	}
	return ret;
}
