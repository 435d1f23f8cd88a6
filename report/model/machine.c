// SPDX-License-Identifier: MIT
/*
 * machine.c - processes, threads and their memory maps over time.
 *
 * The session feeds MMAP/COMM/FORK events here in time order, then calls
 * machine__finish() once; after that only lookups happen. A map is valid
 * from its record's time (0: from the start) until its process execs; the
 * execs cut a process's life into epochs. A forked process sees its parent's
 * maps as they were at the fork until it execs, without copying them, so
 * fork-heavy files cost nothing per fork.
 */
#include "model/model.h"

#include <errno.h>
#include <stdlib.h>

/* Parent links followed at most this far (pid reuse could make a cycle). */
#define MAX_FORK_DEPTH 16

struct proc *machine__find_proc(const struct machine *m, u32 pid)
{
	u64 idx;

	return kvmap__get(&m->proc_idx, pid, 0, &idx) ? m->procs[idx] : NULL;
}

static struct proc *findnew_proc(struct machine *m, u32 pid)
{
	struct proc *p = machine__find_proc(m, pid);

	if (p)
		return p;
	if (array__reserve(&m->procs, &m->cap_procs, m->nr_procs + 1, sizeof(*m->procs)))
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->exit_time = TIME_NEVER;
	if (kvmap__put(&m->proc_idx, pid, 0, m->nr_procs)) {
		free(p);
		return NULL;
	}
	m->procs[m->nr_procs++] = p;
	return p;
}

const struct thread *machine__find_thread(const struct machine *m, u32 tid)
{
	u64 idx;

	return kvmap__get(&m->thread_idx, tid, 0, &idx) ? &m->threads[idx] : NULL;
}

static struct thread *findnew_thread(struct machine *m, u32 pid, u32 tid)
{
	u64 idx;

	if (kvmap__get(&m->thread_idx, tid, 0, &idx))
		return &m->threads[idx];
	if (array__reserve(&m->threads, &m->cap_threads, m->nr_threads + 1, sizeof(*m->threads)))
		return NULL;
	if (kvmap__put(&m->thread_idx, tid, 0, m->nr_threads))
		return NULL;
	m->threads[m->nr_threads] = (struct thread){.pid = pid, .tid = tid};
	return &m->threads[m->nr_threads++];
}

/*
 * A repeat is compared with at most this many maps added since the one it
 * repeats; past them it is kept as a map of its own (right, only slower).
 */
#define MAX_REPEAT_SCAN 4096

/* True if @a and @b are one object: one path, or one build id (/lib and /usr/lib). */
static bool same_object(const struct dso *a, const struct dso *b)
{
	return a == b || (a->build_id[0] && !strcmp(a->build_id, b->build_id));
}

/*
 * True if a map of @p's [start, end) of @dso at @pgoff at @time says nothing
 * new: map @idx, the last one added of that range, maps the same offset of
 * the same object in the same epoch, at or before @time, and none added
 * since lies over it. A window's file repeats every mapping of its process
 * (each of a day's 1,440 windows): kept once, the maps stay as many as the
 * mappings, and lookups as quick as in one file. The samples' answers are
 * the same: the latest map valid at a time is a copy of the first.
 */
static bool repeats(const struct proc *p, u64 idx, u64 pgoff, const struct dso *dso, u64 time)
{
	const struct map *mp = &p->maps[idx];
	size_t j;

	if (mp->pgoff != pgoff || !same_object(mp->dso, dso) || mp->epoch != p->nr_execs ||
	    mp->time > time || mp->end_time != TIME_NEVER || p->nr_maps - idx > MAX_REPEAT_SCAN)
		return false;
	for (j = idx + 1; j < p->nr_maps; j++)
		if (p->maps[j].start < mp->end && p->maps[j].end > mp->start)
			return false;
	return true;
}

/*
 * Record that @pid mapped [start, start + len) of file @name at @pgoff at
 * @time. An anonymous executable mapping (JIT code, see jitmap__is_anon())
 * is, as in perf, a map of /tmp/perf-PID.map at absolute addresses: its
 * file offsets are the addresses themselves.
 */
int machine__mmap(struct machine *m, u32 pid, u64 start, u64 len, u64 pgoff, const char *name,
		  size_t name_len, bool exec, u64 time)
{
	char jit[32];
	struct proc *p;
	struct dso *dso;
	u64 end, idx;

	if (!len)
		return 0;
	if (exec && jitmap__is_anon(name, name_len)) {
		name_len = (size_t)snprintf(jit, sizeof(jit), "/tmp/perf-%u.map", pid);
		name = jit;
		pgoff = start;
	}
	p = findnew_proc(m, pid);
	dso = dsos__findnew(&m->dsos, name, name_len);
	if (!p || !dso)
		return -ENOMEM;
	end = start + len < start ? UINT64_MAX : start + len;
	if (kvmap__get(&p->same, start, end, &idx) && repeats(p, idx, pgoff, dso, time))
		return 0;
	if (array__reserve(&p->maps, &p->cap_maps, p->nr_maps + 1, sizeof(*p->maps)) ||
	    kvmap__put(&p->same, start, end, p->nr_maps))
		return -ENOMEM;
	p->maps[p->nr_maps++] = (struct map){
	    .start = start,
	    .end = end,
	    .pgoff = pgoff,
	    .time = time,
	    .end_time = TIME_NEVER,
	    .epoch = (u32)p->nr_execs, /* until machine__finish() */
	    .dso = dso,
	};
	return 0;
}

/* Add @comm, taken at @time, to the names of @t. Returns 0 or -ENOMEM. */
static int add_name(struct machine *m, struct thread *t, u64 time, const char *comm)
{
	u32 at = t->nr_names;

	while (at && t->names[at - 1].time > time)
		at--;
	if (at && !strcmp(t->names[at - 1].comm, comm))
		return 0; /* the same name again */
	if (array__reserve(&t->names, &t->cap_names, (size_t)t->nr_names + 1, sizeof(*t->names)))
		return -ENOMEM;
	memmove(&t->names[at + 1], &t->names[at], (t->nr_names - at) * sizeof(*t->names));
	t->names[at].time = time;
	snprintf(t->names[at].comm, sizeof(t->names[at].comm), "%s", comm);
	t->nr_names++;
	if (t->nr_names > 1)
		m->comm_changes = true;
	return 0;
}

u32 machine__comm_idx_slow(const struct machine *m, u32 tid, u64 time)
{
	const struct thread *t = machine__find_thread(m, tid);
	u32 after; /* the first name taken after @time */

	_Static_assert(offsetof(struct comm_at, time) == 0, "array__upper keys on the first u64");

	if (!t || t->nr_names < 2)
		return 0;
	after = (u32)array__upper(t->names, t->nr_names, sizeof(*t->names), time);
	return after ? after : 1; /* before its first name: that one */
}

const char *machine__task_comm(const struct machine *m, u32 pid, u32 tid, u32 idx)
{
	const struct thread *t = idx ? machine__find_thread(m, tid) : NULL;

	if (t && idx <= t->nr_names)
		return t->names[idx - 1].comm;
	return machine__comm_of(m, pid, tid);
}

/*
 * Name thread @tid of @pid. An exec at a known time starts a new epoch: it
 * ends every map the process had and its view of its parent's maps.
 */
int machine__comm(struct machine *m, u32 pid, u32 tid, const char *comm, size_t len, bool exec,
		  u64 time)
{
	struct thread *t = findnew_thread(m, pid, tid);
	size_t i;

	if (!t)
		return -ENOMEM;
	t->pid = pid;
	len = strnlen(comm, len);
	if (len >= sizeof(t->comm))
		len = sizeof(t->comm) - 1;
	memcpy(t->comm, comm, len);
	t->comm[len] = 0;
	if (add_name(m, t, time, t->comm))
		return -ENOMEM;
	if (exec && time) {
		struct proc *p = findnew_proc(m, pid);

		if (!p)
			return -ENOMEM;
		if (p->nr_execs && p->execs[p->nr_execs - 1] >= time)
			return 0;
		if (array__reserve(&p->execs, &p->cap_execs, p->nr_execs + 1, sizeof(*p->execs)))
			return -ENOMEM;
		p->execs[p->nr_execs++] = time;
		for (i = 0; i < p->nr_maps; i++) {
			if (p->maps[i].end_time == TIME_NEVER)
				p->maps[i].end_time = time;
		}
	}
	return 0;
}

/* Thread @tid of process @pid was created by @ptid of @ppid at @time. */
int machine__fork(struct machine *m, u32 pid, u32 ppid, u32 tid, u32 ptid, u64 time)
{
	const struct thread *parent = machine__find_thread(m, ptid);
	char comm[sizeof(parent->comm)] = "";
	struct thread *t;

	if (parent)
		memcpy(comm, parent->comm, sizeof(comm));
	t = findnew_thread(m, pid, tid);
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	if (!t->comm[0] && comm[0]) {
		memcpy(t->comm, comm, sizeof(comm));
		if (add_name(m, t, time, comm))
			return -ENOMEM;
	}
	if (pid != ppid) {
		struct proc *child = findnew_proc(m, pid), *pp = findnew_proc(m, ppid);

		if (!child || !pp)
			return -ENOMEM;
		if (child != pp) {
			child->parent = pp;
			child->fork_time = time;
			child->has_fork = true;
		}
	}
	return 0;
}

/* Thread @tid of @pid exited at @time; the process ends with its main thread. */
int machine__exit_task(struct machine *m, u32 pid, u32 tid, u64 time)
{
	struct proc *p;

	if (pid != tid)
		return 0;
	p = findnew_proc(m, pid);
	if (!p)
		return -ENOMEM;
	p->exit_time = time;
	return 0;
}

/*
 * The name of thread @tid: its last COMM, else its process's main thread's,
 * else "" (perf shows such threads as ":tid").
 */
const char *machine__comm_of(const struct machine *m, u32 pid, u32 tid)
{
	const struct thread *t = machine__find_thread(m, tid);

	if (t && t->comm[0])
		return t->comm;
	t = machine__find_thread(m, pid);
	if (t && t->comm[0])
		return t->comm;
	return pid == 0 ? "swapper" : ""; /* the idle task, as perf names it */
}

static int map_cmp(const void *pa, const void *pb)
{
	const struct map *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->time < b->time ? -1 : a->time > b->time;
}

static int map_epoch_cmp(const void *pa, const void *pb)
{
	const struct map *a = *(const struct map *const *)pa, *b = *(const struct map *const *)pb;

	if (a->epoch != b->epoch)
		return a->epoch < b->epoch ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The epoch of @time in @p: how many of its execs happened at or before it. */
u32 machine__proc_epoch(const struct proc *p, u64 time)
{
	return (u32)array__upper(p->execs, p->nr_execs, sizeof(*p->execs), time);
}

/* How many overlapping maps machine__finish() compares a map with before it gives up on it. */
#define MAX_OVERLAPS 64

/*
 * The end of the time from @mp->time in which @mp is the map of every
 * address it holds: the time of the first other map of its epoch (v, sorted
 * by epoch and start, @mp at @i; @max_end the prefix maxima of ends within
 * an epoch) that overlaps it and comes at or after it, else its end_time.
 * A map no later one overlaps is stable to its end; one that comes at the
 * same time as an overlapping map, or has too many, never is.
 */
static u64 stable_until(const struct map **v, const u64 *max_end, size_t nr, size_t i)
{
	const struct map *mp = v[i];
	u64 until = mp->end_time;
	size_t j, seen = 0;

	for (j = i + 1; j < nr && v[j]->epoch == mp->epoch && v[j]->start < mp->end; j++) {
		if (v[j]->end > mp->start && v[j]->time >= mp->time && v[j]->time < until)
			until = v[j]->time;
		if (++seen > MAX_OVERLAPS)
			return mp->time;
	}
	for (j = i; j > 0 && v[j - 1]->epoch == mp->epoch && max_end[j - 1] > mp->start; j--) {
		if (v[j - 1]->end > mp->start && v[j - 1]->time >= mp->time &&
		    v[j - 1]->time < until)
			until = v[j - 1]->time;
		if (++seen > MAX_OVERLAPS)
			return mp->time;
	}
	return until;
}

/*
 * True if no two maps of one epoch overlap, so (epoch, address) decides the
 * map; either way, set each map's stable_until.
 */
static int check_simple(struct proc *p, bool *simple)
{
	const struct map **v;
	u64 *max_end;
	size_t i;

	*simple = true;
	if (p->nr_maps < 2) {
		for (i = 0; i < p->nr_maps; i++)
			p->maps[i].stable_until = p->maps[i].end_time;
		return 0;
	}
	v = malloc(p->nr_maps * sizeof(*v));
	max_end = malloc(p->nr_maps * sizeof(*max_end));
	if (!v || !max_end) {
		free(v);
		free(max_end);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_maps; i++)
		v[i] = &p->maps[i];
	qsort(v, p->nr_maps, sizeof(*v), map_epoch_cmp);
	for (i = 0; i < p->nr_maps; i++) {
		bool same = i && v[i]->epoch == v[i - 1]->epoch;

		if (same && v[i]->start < max_end[i - 1])
			*simple = false;
		max_end[i] = same && max_end[i - 1] > v[i]->end ? max_end[i - 1] : v[i]->end;
	}
	for (i = 0; i < p->nr_maps; i++)
		((struct map *)v[i])->stable_until =
		    *simple ? v[i]->end_time : stable_until(v, max_end, p->nr_maps, i);
	free(v);
	free(max_end);
	return 0;
}

/* True if @mp is @p's map of every address it holds at time @t. */
bool machine__map_decides(const struct map *mp, u64 t)
{
	return mp->time <= t && t < mp->stable_until;
}

/* Sort every process's maps for lookup. Returns 0 or -ENOMEM. */
int machine__finish(struct machine *m)
{
	size_t i, j;

	for (i = 0; i < m->nr_procs; i++) {
		struct proc *p = m->procs[i];

		if (p->nr_maps > 1)
			qsort(p->maps, p->nr_maps, sizeof(*p->maps), map_cmp);
		kvmap__exit(&p->same); /* its indexes are the order of adding */
		free(p->max_end);
		p->max_end = malloc((p->nr_maps ? p->nr_maps : 1) * sizeof(*p->max_end));
		if (!p->max_end)
			return -ENOMEM;
		p->last = NULL;
		p->fork_epoch = machine__proc_epoch(p, p->fork_time);
		for (j = 0; j < p->nr_maps; j++) {
			u64 prev = j ? p->max_end[j - 1] : 0;

			p->maps[j].epoch = machine__proc_epoch(p, p->maps[j].time);
			p->max_end[j] = p->maps[j].end > prev ? p->maps[j].end : prev;
		}
		if (check_simple(p, &p->simple))
			return -ENOMEM;
	}
	return 0;
}

/*
 * The map of @p containing @addr at time @t (in epoch @epoch): the latest
 * one valid at @t; if none, and @late, the earliest one of the same epoch
 * recorded after @t (a writer may record a map after the samples that used it).
 */
static const struct map *find_own(struct proc *p, u64 addr, u64 t, u32 epoch, bool late)
{
	const struct map *best = NULL, *after = NULL;
	size_t lo;

	/* The last answer, when the search below would give it again: no map
	 * of the epoch lies over it at t, so it is the answer if valid at t; in
	 * a simple process also if it comes later and a later map may be taken. */
	if (p->last && p->last->epoch == epoch && addr >= p->last->start && addr < p->last->end &&
	    (machine__map_decides(p->last, t) || (p->simple && p->last->time > t && late)))
		return p->last;
	lo = array__upper(p->maps, p->nr_maps, sizeof(*p->maps), addr);
	for (; lo > 0 && p->max_end[lo - 1] > addr; lo--) {
		const struct map *mp = &p->maps[lo - 1];

		if (addr >= mp->end)
			continue;
		if (mp->time <= t && t < mp->end_time) {
			if (!best || mp->time >= best->time)
				best = mp;
		} else if (mp->time > t && mp->epoch == epoch &&
			   (!after || mp->time < after->time)) {
			after = mp;
		}
	}
	if (!best && late)
		best = after;
	if (best)
		p->last = best;
	return best;
}

/*
 * The map of process @p that holds @addr at time @t, whose epoch in @p is
 * @epoch (machine__proc_epoch()), or NULL. Before its first exec a forked process
 * also sees its parent's maps as of the fork. Needs machine__finish().
 */
const struct map *machine__proc_find_map(struct proc *p, u64 addr, u64 t, u32 epoch)
{
	const struct map *mp = find_own(p, addr, t, epoch, true);
	int depth;

	for (depth = 0; !mp && p->parent && epoch == p->fork_epoch && depth < MAX_FORK_DEPTH;
	     depth++) {
		t = p->fork_time;
		p = p->parent;
		epoch = machine__proc_epoch(p, t);
		mp = find_own(p, addr, t, epoch, false);
	}
	return mp;
}

void machine__exit(struct machine *m)
{
	size_t i;

	for (i = 0; i < m->nr_procs; i++) {
		free(m->procs[i]->maps);
		free(m->procs[i]->execs);
		free(m->procs[i]->max_end);
		kvmap__exit(&m->procs[i]->same);
		free(m->procs[i]);
	}
	free(m->procs);
	for (i = 0; i < m->nr_threads; i++)
		free(m->threads[i].names);
	free(m->threads);
	kvmap__exit(&m->proc_idx);
	kvmap__exit(&m->thread_idx);
	dsos__exit(&m->dsos);
	memset(m, 0, sizeof(*m));
}
