/* SPDX-License-Identifier: MIT */
/*
 * lifecycle.c - the profiling session of this process image: the order in
 * which things start and stop (entry.c calls these from the constructor and
 * destructor), and what happens at fork and exec.
 *
 * Naming: the first process of a run writes the output name itself
 * (perf.data); a forked or spawned descendant writes NAME.<pid>; a program
 * that a process exec'd writes NAME.<pid>.<n> for its n-th exec. The first
 * process makes the name absolute and passes it down in AUTOPROF_OUTPUT, with
 * AUTOPROF_TOP (its pid); our exec wrappers add AUTOPROF_IMAGE (pid:n:left;
 * left is 1 when the image before left its finished, empty file at the name
 * the next one takes: the next replaces it by a rename, so that the run's
 * file exists at every moment, a signal during the exec included).
 *
 * Whatever fails, the program runs on unprofiled: one line on stderr says
 * why, and the program's errno, signals, fds and output are left as they were.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "memory.h"

/* What the session reads before (or without) a settled configuration: zeros. */
static const struct ap_settled unsettled;

struct ap_session autoprof = {.cfg = &unsettled};

/*
 * One line for what a machine without a PMU cannot do; nothing elsewhere.
 * Said by the run's first image only (not again by a later image of the
 * same process, nor by its descendants).
 */
static void say_missing_pmu(const struct ap_counters *cs, int fell_back)
{
	char missing[512];

	counting__unsupported(cs, missing, sizeof(missing));
	if (fell_back && missing[0])
		pr_warn("no hardware PMU here (the kernel offers no cycles event): sampling "
			"cpu-clock; not counting %s",
			missing);
	else if (fell_back)
		pr_warn("no hardware cycles event here: sampling cpu-clock");
	else if (missing[0])
		pr_warn("not counting %s: the machine lacks them", missing);
}

/* The counts of the threads still sampling at an exec (samplers__flush_all), not yet folded. */
static struct ap_stats exec_stats;

/* The timer source: give the file the period actually delivered, on average. */
static void record_delivered_period(void)
{
	struct perf_event_attr *attr = &autoprof.writer.events[0].attr;
	uint64_t samples = autoprof.stats.samples + exec_stats.samples;

	if (!autoprof.cfg->timer_mode || !samples)
		return;
	attr->sample_period = (autoprof.stats.period_sum + exec_stats.period_sum) / samples;
	attr->freq = 0;
	writer__update_attr(&autoprof.writer, 0);
	pr_info("timer sampling delivered %.0f samples per CPU-second (asked for %llu)",
		1e9 / (double)attr->sample_period, (unsigned long long)autoprof.cfg->hz);
}

/*
 * The file's attrs: the sampling event (id 1) only, as in a perf record
 * file; the counters' attrs go with their totals into FILE.stat (stat_records.c).
 */
static int file_events(struct writer_event *events)
{
	events[0].attr = autoprof.cfg->attr;
	events[0].attr.sample_regs_user = 0; /* batched samples' copies stay ours */
	events[0].attr.sample_stack_user = 0;
	events[0].id = AP_SAMPLE_ID;
	snprintf(events[0].name, sizeof(events[0].name), "%s", autoprof.cfg->event_name);
	return extra_events__file_events(events, 1); /* AUTOPROF_AGGREGATE_CHECK, AUTOPROF_OFFCPU */
}

/*
 * Who we are in the run: the first process (top), a descendant, and which
 * exec of this process (gen). Returns whether this is the run's first
 * process (no AUTOPROF_TOP yet: export_lineage() sets it).
 */
static bool find_lineage(void)
{
	const char *top = ap_env(AP_ENV_TOP);
	const char *image = ap_env(AP_ENV_IMAGE);
	int pid = 0, gen = 0, left = 0;

	if (image && sscanf(image, "%d:%d:%d", &pid, &gen, &left) >= 2 && pid == autoprof.pid) {
		autoprof.execd = true; /* an exec made this image: the run said its warnings */
		if (gen > 0)
			autoprof.gen = gen;
		autoprof.replace_file = left == 1;
	}
	autoprof.top = !top || !*top || atoi(top) == autoprof.pid;
	return !top || !*top;
}

/*
 * The run's first process hands its descendants the output pattern (made absolute by the
 * settling) and its pid, and with AUTOPROF_FOLLOW=0 takes the library out of their LD_PRELOAD.
 */
static void export_lineage(const struct ap_settled *cfg)
{
	char buf[32];

	setenv(ap_env_name(AP_ENV_OUTPUT), cfg->output, 1);
	snprintf(buf, sizeof(buf), "%d", (int)autoprof.pid);
	setenv(ap_env_name(AP_ENV_TOP), buf, 1);
	probe_cache__export();
	if (!cfg->follow)
		child_env__drop_preload();
}

/* What every thread's handler reads (handler.h), set before any thread samples. */
static void describe_sampler(void)
{
	struct ap_sampler *s = &autoprof.sampler;

	s->writer = &autoprof.writer;
	s->sample_type = autoprof.cfg->attr.sample_type;
	s->callgraph = autoprof.cfg->callgraph;
	s->stack_depth = autoprof.cfg->stack_depth;
	s->pid = (uint32_t)autoprof.pid;
	s->measure_unwind = autoprof.cfg->verbose > 0;
	s->measure_cost = cost__wanted();
	s->batched = !autoprof.cfg->timer_mode && perf_event__batched(autoprof.cfg);
	s->tick_samples = perf_event__tick_samples(autoprof.cfg);
	s->cfg = autoprof.cfg;
	s->signo = &autoprof.signo;
}

/*
 * Open this image's file and start sampling the calling thread (and, at
 * first start, threads that already exist). Returns 0 or -errno, said.
 */
static int session_open(bool attach_others)
{
	struct writer_event events[AP_MAX_EVENTS];
	char path[PATH_MAX], fresh[PATH_MAX + 16];
	int err;

	if (image_name__path(path, sizeof(path)) ||
	    windows__first_path(autoprof.cfg, path, sizeof(path)) ||
	    image_name__first_path(path, fresh, sizeof(fresh))) {
		pr_warn("AUTOPROF_OUTPUT='%s' is too long; not profiling", autoprof.cfg->output);
		return -ENAMETOOLONG;
	}
	/* a descendant's file made at its first flush: one that never samples makes none (the
	 * launcher finds those with no file yet by their endpoints: launcher/onefile_live.c) */
	err = writer__open(&autoprof.writer, fresh, events, file_events(events),
			   !autoprof.top && !autoprof.replace_file && !autoprof.cfg->window_ns &&
			       !autoprof.cfg->memory);
	if (err) {
		pr_warn("cannot create %s: %s; not profiling", fresh, strerror(-err));
		return err;
	}
	mappings__load(); /* one reading: the records and the features' file names */
	file_features__early(&autoprof.writer); /* the file is finished after every append */
	err = mappings__write_all(&autoprof.writer, autoprof.pid);
	if (!err && autoprof.cfg->kernel && mappings__write_kernel(&autoprof.writer) &&
	    autoprof.top)
		pr_warn("AUTOPROF_KERNEL: /proc/kallsyms hides kernel addresses "
			"(kernel.kptr_restrict); kernel samples will not resolve to symbols");
	if (!err)
		err = image_name__replace_left(path);
	if (err) {
		image_name__say_unwritten(path, fresh, err);
		goto out_file;
	}
	stat_records__remove(&autoprof.writer); /* an earlier run's totals are not this one's */
	windows__save_prologue(&autoprof.writer);
	describe_sampler();
	__atomic_store_n(&autoprof.active, true, __ATOMIC_RELEASE);
	err = samplers__start();
	if (err) {
		__atomic_store_n(&autoprof.active, false, __ATOMIC_RELEASE);
		pr_warn("cannot start sampling %s: %s; not profiling", autoprof.cfg->event_name,
			strerror(-err));
		goto out_file;
	}
	if (attach_others)
		samplers__attach_others();
	control__publish();
	writer__staging(&autoprof.writer, false); /* the first flush makes the file */
	pr_info(
	    "sampling %s%s at %llu %s with %s stacks into %s", autoprof.cfg->event_name,
	    autoprof.cfg->timer_mode ? " with CPU-time timers" : "",
	    (unsigned long long)(autoprof.cfg->period ? autoprof.cfg->period : autoprof.cfg->freq),
	    autoprof.cfg->period ? "events per sample" : "Hz",
	    options__callgraph_name(autoprof.cfg->callgraph), path);
	return 0;

out_file:
	if (writer__created(&autoprof.writer))
		unlink(autoprof.writer.path);
	writer__abandon(&autoprof.writer);
	return err;
}

/*
 * In a forked child (pthread_atfork): drop the parent's sampler state, which
 * is not ours (the fds are the parent's events, the rings are not mapped
 * here, the buffers hold the parent's records), then, when following
 * children, open NAME.<pid> and sample this, the child's only thread.
 */
static void after_fork_in_child(void)
{
	bool was_active = __atomic_exchange_n(&autoprof.active, false, __ATOMIC_ACQ_REL);

	exec_window__after_fork();
	__atomic_store_n(&autoprof.exec_window, false, __ATOMIC_RELEASE); /* its parent's exec */
	__atomic_store_n(&autoprof.exec_restart, false, __ATOMIC_RELEASE);
	registry__forget_all();
	if (!was_active)
		return;
	writer__abandon(&autoprof.writer);
	counting__close(&autoprof.counters);
	memset(&autoprof.stats, 0, sizeof(autoprof.stats)); /* from zero */
	autoprof.pid = getpid();
	autoprof.top = false;
	autoprof.gen = 0;
	autoprof.start_time = ap_now();
	autoprof.state_since = autoprof.start_time; /* paused or not, as its parent */
	autoprof.on_since = autoprof.paused ? 0 : autoprof.start_time;
	autoprof.off_since = 0;
	autoprof.sampled_ns = 0;
	if (autoprof.cfg->follow)
		session_open(false);
}

/*
 * Settle the configuration read into @raw (settle.c) for this image, into
 * storage nothing else can write. Returns 0 or -errno, said.
 */
static int settle(const struct ap_config *raw, bool first)
{
	static struct ap_settled settled;
	char cwd[PATH_MAX], missing[512];
	struct settle_facts facts = {.max_rate = perf_event__max_sample_rate,
				     .probe = probe_cache__probe,
				     .cwd = first ? getcwd(cwd, sizeof(cwd)) : NULL,
				     .say_timers = autoprof.top && !autoprof.execd};
	int err;

	counting__unsupported(&autoprof.counters, missing, sizeof(missing));
	facts.no_counters = missing[0] != 0;
	err = settle__config(raw, &facts, &settled);
	autoprof.cfg = &settled;
	autoprof.signo = settled.signo;
	return err;
}

/*
 * Start profiling this process: options, lineage, counters, the settled
 * configuration, handler, then this image's file and the calling thread's
 * sampler. Returns 0, or -errno after saying why the program runs
 * unprofiled. Not async-signal-safe.
 */
int lifecycle__start(void)
{
	static struct ap_config raw;
	bool first;
	int err;

	if (getauxval(AT_SECURE))
		return 0; /* setuid/setgid: stay off, silently, as the loader does */
	autoprof.start_time = ap_now();
	memory__mark(); /* before we allocate */
	if (options__parse(&raw))
		return -EINVAL;
	if (gocheck__runtime_owned()) {
		pr_warn("a Go program without cgo: its runtime takes every signal and makes its "
			"threads with raw clone, so the library cannot sample it; not profiling "
			"(the launcher, autoprof -- PROGRAM, profiles it from outside)");
		return -ENOTSUP;
	}
	autoprof.paused = !raw.start; /* AUTOPROF_START=0 */
	autoprof.state_since = autoprof.start_time;
	autoprof.on_since = raw.start ? autoprof.start_time : 0;
	autoprof.off_since = 0;
	autoprof.pid = getpid();
	first = find_lineage();
	if (first && !ap_env(AP_ENV_LAUNCHER))
		env_warn__say_unknown(); /* once per run: the launcher said them */
	if (autoprof.top || raw.counter_fds[0]) {
		err = image_counters__start(&autoprof.counters, &raw);
		if (err)
			return err;
	}
	err = settle(&raw, first);
	if (first)
		export_lineage(autoprof.cfg);
	if (err)
		goto out_counters;
	if (autoprof.top && !autoprof.execd && !autoprof.cfg->timer_mode)
		say_missing_pmu(&autoprof.counters, autoprof.cfg->fell_back);
	image_counters__drop_costly(&autoprof.counters);
	/* libunwind: what walks with it, and when it is set up (unwind__init) */
	if (autoprof.cfg->callgraph == AP_CG_LIBUNWIND || autoprof.cfg->timer_mode ||
	    autoprof.cfg->memory || autoprof.cfg->offcpu)
		unwind__init(autoprof.cfg, autoprof.paused);
	if (autoprof.cfg->callgraph == AP_CG_LIBUNWIND && !unwind__ready())
		fds__keep_unwinder_pipe(); /* for its set-up, later (fds.c) */
	signals__init();
	image__register(&(struct ap_image){.active = &autoprof.active,
					   .pid = &autoprof.pid,
					   .writer = &autoprof.writer,
					   .cfg = autoprof.cfg,
					   .totals = &autoprof.stats,
					   .paused = &autoprof.paused,
					   .state_since = &autoprof.state_since,
					   .sampled_ns = &autoprof.sampled_ns,
					   .on_since = &autoprof.on_since,
					   .off_since = &autoprof.off_since,
					   .on_pause = image_counters__follow,
					   .snapshot = memory__snapshot,
					   .dump = memory__dump});
	err = handlers__install_sample(autoprof.signo);
	if (err) {
		pr_warn("signal %d already has a handler (%s); not profiling (set AUTOPROF_SIGNAL)",
			autoprof.signo, strerror(-err));
		goto out_counters;
	}
	threads__init();
	child_env__init();
	ap_atfork(registry__atfork_prepare, registry__atfork_parent, after_fork_in_child);
	err = session_open(true);
	if (err) {
		handlers__uninstall_sample();
		goto out_counters;
	}
	fatal__set_stop(lifecycle__emergency_stop);
	handlers__install_fatal();
	memory__start(); /* AUTOPROF_MEMORY */
	return 0;

out_counters:
	counting__close(&autoprof.counters);
	return err;
}

/*
 * Was this thread inside the profiler when the handler of the program that calls exec
 * interrupted it: a memory sample or a live-table update (the memory guard up), its sampler's
 * buffer held by itself (1: a memory sample's record, a rename; not a visitor's 2, another
 * thread flushing it for an exec), or a write of the file? Its code resumes
 * if the exec fails, on what it held: the exec path keeps all that (lifecycle__before_exec).
 */
static bool interrupted_inside(void)
{
	struct ap_thread *t = ap_self;

	return ap_mem.busy || (t && __atomic_load_n(&t->in_handler, __ATOMIC_SEQ_CST) == 1) ||
	       writer_lock__held_here(&autoprof.writer);
}

/*
 * What both endings of this image (its exit, its exec) begin with: false when the session is
 * not this process's or has ended already; else the session ends here: the ctl endpoints
 * withdrawn, every sampler stopped (at exec flushed only: the exec may fail), the live set
 * written (kept at exec, for the next to retire if it fails). Not async-signal-safe.
 */
static bool stand_down(bool exec)
{
	/* one exchange: a single thread stands down (the others' endings wait, exec_window.c) */
	if (process_events__sandboxed() || getpid() != autoprof.pid ||
	    !__atomic_exchange_n(&autoprof.active, false, __ATOMIC_ACQ_REL))
		return false;
	__atomic_store_n(&autoprof.exec_window, exec, __ATOMIC_RELEASE);
	autoprof.exec_inside = exec && interrupted_inside();
	writer_lock__own_write_resumes(autoprof.exec_inside);
	control__withdraw();
	writer__staging(&autoprof.writer, true); /* a file not made yet: only if not empty */
	memset(&exec_stats, 0, sizeof(exec_stats));
	if (!exec) {
		samplers__stop_all();
	} else {
		/* the calling thread's event ends before the exec (with kernel samples on, one
		 * firing inside execve would leave the next image a signal it does not handle);
		 * not under the code a handler's exec interrupted (then it is kept) */
		if (!autoprof.exec_inside)
			samplers__stop_self();
		samplers__flush_all(&exec_stats); /* the others sample on if the exec fails */
		if (autoprof.exec_inside)
			samplers__arm_self(false); /* kept, its event ended */
	}
	memory__stop(&autoprof.writer, exec); /* the live set */
	return true;
}

/*
 * Would an exec now finish this image's file, and a failed one reopen it (stand_down(true),
 * lifecycle__exec_failed: 0.8 ms)? Not in a process whose session is not its own, nor from
 * a handler that interrupted the profiler (that exec takes the path that keeps what it held).
 */
bool lifecycle__exec_finishes(void)
{
	return __atomic_load_n(&autoprof.active, __ATOMIC_ACQUIRE) &&
	       !process_events__sandboxed() && getpid() == autoprof.pid && !interrupted_inside() &&
	       !registry__held_here();
}

/*
 * A descendant's image that took no sample leaves no file (a build's short processes leave no
 * litter): its file (if made: a descendant's is made at its first flush) and FILE.stat are
 * removed as they are, without the features of the end written first. Async-signal-safe.
 */
static void remove_file(void)
{
	bool made = writer__created(&autoprof.writer);

	writer__discard(&autoprof.writer);
	if (made)
		unlink(autoprof.writer.path);
	stat_records__remove(&autoprof.writer);
}

/*
 * Stop every sampler and finish the file: at exit, _exit, or before exec. Only the process
 * that opened the file writes it; a descendant's with no sample is removed. Not AS-safe.
 */
void lifecycle__stop(void)
{
	uint64_t elapsed;
	bool empty;
	int err;

	exec_window__enter(interrupted_inside());
	if (!stand_down(false)) {
		exec_window__leave();
		return;
	}
	elapsed = image_counters__save(true);
	if (autoprof.cfg->stat)
		stat_records__print(&autoprof.counters, elapsed);
	record_delivered_period();
	empty = !autoprof.stats.samples && !memory__samples() && !autoprof.top;
	if (empty) {
		remove_file(); /* not finished first: nobody reads it */
	} else {
		err = file_features__write(&autoprof.writer);
		if (err)
			pr_warn("writing %s failed: %s; the profile is cut short",
				autoprof.writer.path, strerror(-err));
	}
	summary__say();
	summary__say_signals();
	exec_window__leave();
}

/*
 * Before a real exec of this image: finish the file (no destructor runs at exec). An image
 * that took no CPU sample and allocated less than an interval and 512 KiB (memory__an_
 * interval()) hands its name on (so `sh -c 'exec prog'` leaves prog's profile under the name
 * asked for): the run's first process leaves its finished file for the next image to replace
 * (a signal that ends the process before the next image has its own file leaves a profile all
 * the same); a descendant removes it. The counters stay open for the next image, which takes
 * them over from AUTOPROF_COUNTER_FDS. Not async-signal-safe.
 */
void lifecycle__before_exec(void)
{
	/* a handler's exec inside fork() (its prepare holds the registry: 11 of 20 runs hung)
	 * or inside the library's own hold of it: a finish would wait for itself; the file
	 * stays as a kill would leave it */
	if (registry__held_here())
		return;
	exec_window__enter(interrupted_inside()); /* left in lifecycle__exec_failed */
	if (!stand_down(true))
		return;
	image_counters__save(false);
	/* one that allocated an interval keeps its allocations and live set (a program that
	 * allocates, then execs); sh -c or env, whether or not an allocation was sampled, not */
	autoprof.exec_keeps_name = !autoprof.exec_inside &&
				   !(autoprof.stats.samples + exec_stats.samples) &&
				   !memory__an_interval();
	autoprof.file_left = false;
	record_delivered_period();
	if (autoprof.exec_keeps_name && !autoprof.top)
		remove_file(); /* not finished first: nobody reads it */
	else if (autoprof.exec_inside && writer_lock__held_here(&autoprof.writer))
		; /* the interrupted write resumes if the exec fails: the file stays as it is */
	else if (file_features__write(&autoprof.writer) == 0 && autoprof.exec_keeps_name)
		autoprof.file_left = true;
	else if (!autoprof.exec_inside && !autoprof.exec_keeps_name)
		summary__say(); /* its file is whole and stays: its last words (verbose) */
	counting__keep_across_exec(&autoprof.counters, true);
	autoprof.exec_pending = true;
}

/* Does the next image replace the file this one left at its name (see the naming rules)? */
bool lifecycle__file_left(void)
{
	return autoprof.exec_pending && autoprof.exec_keeps_name && autoprof.file_left;
}

/* The generation the next image of this process gets (see the naming rules). */
int lifecycle__next_gen(void)
{
	return autoprof.exec_pending && autoprof.exec_keeps_name ? autoprof.gen : autoprof.gen + 1;
}

/*
 * The exec failed: the image goes on, and so does its profile, in the same file, by the same
 * samplers (the other threads' sampled on, the calling thread's starts again; a handler's exec
 * that interrupted the profiler resumes it on what it held); also one that handed its name on,
 * when its finished file was left at the name (the run's first process: what it allocated
 * before the exec stays in the profile). A descendant's, removed for the exec, starts anew,
 * its counts from zero (memory__exec_fresh() states the bytes of the removed file); its other
 * threads are stopped and stay unprofiled.
 */
static void exec_failed(void)
{
	bool inside = autoprof.exec_inside;
	int stopped;

	if (!autoprof.exec_pending || getpid() != autoprof.pid)
		return;
	autoprof.exec_pending = false;
	autoprof.exec_inside = false;
	writer_lock__own_write_resumes(false);
	counting__keep_across_exec(&autoprof.counters, false);
	if (!autoprof.exec_keeps_name || autoprof.file_left) { /* the same file, reopened */
		if (!autoprof.writer.sealed || writer__reopen(&autoprof.writer) == 0) {
			autoprof.file_left = false;
			__atomic_store_n(&autoprof.active, true, __ATOMIC_RELEASE);
			__atomic_store_n(&autoprof.exec_window, false, __ATOMIC_RELEASE);
			if (!inside) /* the calling thread's, stopped for the exec */
				samplers__start();
			else
				samplers__arm_self(true);
			control__publish();
			memory__start();
			return;
		}
		if (inside) { /* its samplers write nothing more: the resumed code is on one */
			__atomic_store_n(&autoprof.exec_window, false, __ATOMIC_RELEASE);
			return;
		}
	}
	__atomic_store_n(&autoprof.exec_restart, true, __ATOMIC_RELEASE);
	__atomic_store_n(&autoprof.exec_window, false, __ATOMIC_RELEASE);
	stopped = samplers__stop_all(); /* a new file (below): the samplers that sampled on */
	if (stopped)
		pr_warn(
		    "a failed exec started a new file: %d other thread%s not sampled from now on",
		    stopped, stopped == 1 ? " is" : "s are");
	live_set__forget(); /* the exec's live set is in a file no longer this image's */
	memset(&autoprof.stats, 0, sizeof(autoprof.stats)); /* from zero */
	autoprof.replace_file = autoprof.file_left;	    /* this image's own empty file */
	autoprof.file_left = false;
	if (session_open(false) == 0) {
		memory__exec_fresh();
		memory__start();
	}
	__atomic_store_n(&autoprof.exec_restart, false, __ATOMIC_RELEASE);
}

void lifecycle__exec_failed(void)
{
	exec_failed();
	exec_window__leave(); /* entered in lifecycle__before_exec */
}

/*
 * From a deadly signal's handler: stop every sampler without blocking and
 * finish the file with the features laid out at start. Records only: nothing
 * is printed (the AUTOPROF_STAT table is formatted with stdio's %f, which is
 * not async-signal-safe; it is printed at a normal exit only; the totals are
 * in the file). Async-signal-safe.
 */
void lifecycle__emergency_stop(void)
{
	if (process_events__sandboxed() || (pid_t)raw_syscall(SYS_getpid) != autoprof.pid ||
	    !__atomic_exchange_n(&autoprof.active, false, __ATOMIC_ACQ_REL))
		return;
	control__withdraw();
	writer__staging(&autoprof.writer, true);
	process_events__stop_all_emergency();
	memory__stop_emergency(&autoprof.writer);
	image_counters__save(false);
	if (autoprof.stats.samples || memory__samples() || autoprof.top)
		file_features__write_emergency(&autoprof.writer);
	else
		remove_file(); /* not finished first: nobody reads it */
}
