// SPDX-License-Identifier: MIT
/*
 * render_csv.c - --csv DIR: the four tables of the classic readperf report,
 * each with a header row:
 *   stat.csv       records per type
 *   overview.csv   every record, in time order (records without a time first,
 *                  in file order)
 *   processes.csv  per process: name, maps, fork and exit time, samples, period
 *   results.csv    per function of the main event: samples, period, source file
 * The overview sorts an index of every record (24 bytes each): the one
 * export whose memory grows with the file, as its output does.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

struct rec_ref {
	u64 time;
	u64 off;
	u32 file;
	u32 has_time;
};

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
		const char *name = record_type__name(t);

		if (s->type_counts[t])
			fprintf(f, "%u,%s,%llu\n", t, name ? name : "UNKNOWN",
				(unsigned long long)s->type_counts[t]);
	}
	if (s->unknown_records)
		fprintf(f, "-1,UNKNOWN,%llu\n", (unsigned long long)s->unknown_records);
}

/* Fixed part of the records whose trailer we read for a time. */
static size_t fixed_of(u32 type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		return sizeof(struct perf_record_mmap);
	case PERF_RECORD_MMAP2:
		return sizeof(struct perf_record_mmap2);
	case PERF_RECORD_COMM:
		return sizeof(struct perf_record_comm);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return sizeof(struct perf_record_fork);
	case PERF_RECORD_LOST:
		return sizeof(struct perf_record_lost);
	case PERF_RECORD_LOST_SAMPLES:
		return sizeof(struct perf_record_lost_samples);
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return sizeof(struct perf_record_throttle);
	default:
		return sizeof(struct perf_event_header);
	}
}

/* The sample-id fields of @r (time, pid, tid, cpu), when it has them. */
static bool record_ids(const struct perf_file *pf, const struct record *r, struct sample *id,
		       size_t *body_end)
{
	*body_end = r->h.size;
	if (r->h.type == PERF_RECORD_SAMPLE)
		return sample__parse(pf, r, id) == 0;
	if (r->h.type >= PERF_RECORD_USER_TYPE_START || r->h.size < fixed_of(r->h.type))
		return false;
	return sample_id__parse(pf, r, fixed_of(r->h.type), id, body_end) == 0;
}

static int ref_cmp(const void *pa, const void *pb)
{
	const struct rec_ref *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* One overview line's "info" column. */
static void record_info(struct session *s, const struct record *r, const struct sample *id,
			size_t body_end, FILE *f)
{
	const u8 *p = r->p;
	size_t fixed = fixed_of(r->h.type);
	char buf[256];
	u32 nr;

	buf[0] = 0;
	switch (r->h.type) {
	case PERF_RECORD_SAMPLE:
		if (hists__resolve(&s->hists, &s->machine, id, &nr) == 0)
			snprintf(buf, sizeof(buf), "%#llx %s", (unsigned long long)id->ip,
				 s->hists.funcs[s->hists.locs[s->hists.frames[0]].fid].name);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
		snprintf(buf, sizeof(buf), "%.*s", (int)(body_end - fixed),
			 (const char *)p + fixed);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		snprintf(buf, sizeof(buf), "ppid %u ptid %u", ld32(p + 12), ld32(p + 20));
		break;
	case PERF_RECORD_LOST:
		snprintf(buf, sizeof(buf), "lost %llu", (unsigned long long)ld64(p + 16));
		break;
	default:
		break;
	}
	escape_csv(f, buf);
}

static int write_overview(struct session *s, FILE *f)
{
	struct rec_ref *refs = NULL;
	size_t nr = 0, cap = 0, i;
	struct record r;
	struct sample id;
	size_t body_end;
	u32 fi;

	for (fi = 0; fi < s->nr_files; fi++) {
		struct perf_file *pf = &s->files[fi];
		u64 pos = pf->data_off;

		while (perf_file__next_record(pf, &pos, &r) > 0) {
			bool ok = record_ids(pf, &r, &id, &body_end);

			if (nr == cap) {
				size_t ncap = cap ? cap * 2 : 4096;
				struct rec_ref *nv = realloc(refs, ncap * sizeof(*nv));

				if (!nv) {
					free(refs);
					return -ENOMEM;
				}
				refs = nv;
				cap = ncap;
			}
			refs[nr++] = (struct rec_ref){ok && id.has_time ? id.time : 0, r.off, fi,
						      ok && id.has_time};
		}
	}
	if (nr)
		qsort(refs, nr, sizeof(*refs), ref_cmp);
	fprintf(f, "time,file,offset,type,name,pid,tid,cpu,size,info\n");
	for (i = 0; i < nr; i++) {
		const struct perf_file *pf = &s->files[refs[i].file];
		const char *name;
		bool ok;

		if (perf_file__record_at(pf, refs[i].off, &r))
			continue;
		ok = record_ids(pf, &r, &id, &body_end);
		name = record_type__name(r.h.type);
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
	}
	free(refs);
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

	pids = malloc((m->nr_procs + h->nr_tasks + 1) * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	for (i = 0; i < m->nr_procs + h->nr_tasks && !err; i++) {
		u32 pid = i < m->nr_procs ? m->procs[i]->pid : h->tasks[i - m->nr_procs].pid;
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

		for (j = 0; j < h->nr_tasks; j++) {
			if (h->tasks[j].pid != pids[i])
				continue;
			samples += h->tasks[j].samples;
			period += h->tasks[j].period;
			threads++;
		}
		fprintf(f, "%u,", pids[i]);
		escape_csv(f, machine__comm_of(m, pids[i], pids[i]));
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
	err = rows__build(&rows, s, hist, &by_func);
	if (!err) {
		rows__sort(&rows, s, false);
		for (i = 0; i < rows.nr; i++) {
			const struct row *r = &rows.v[i];

			escape_csv(f, s->hists.funcs[r->fid].name);
			fputc(',', f);
			escape_csv(f, s->hists.funcs[r->fid].object);
			fprintf(f, ",%llu,%llu,%.4f,%llu,%llu,%.4f,",
				(unsigned long long)r->self_samples,
				(unsigned long long)r->self_period,
				pct_of(r->self_period, hi->total_period),
				(unsigned long long)r->total_samples,
				(unsigned long long)r->total_period,
				pct_of(r->total_period, hi->total_period));
			report__func_source(s, r->fid, src, sizeof(src));
			escape_csv(f, src);
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
