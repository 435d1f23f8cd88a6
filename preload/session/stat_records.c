/* SPDX-License-Identifier: MIT */
/*
 * stat.c - the counter totals: as STAT records in the file (which perf report
 * and perf script skip, and `perf stat report` prints), and perf-stat style
 * on stderr when AUTOPROF_STAT=1. Not async-signal-safe.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "internal.h"

/* perf's enum aggr_mode value for one total over everything (AGGR_GLOBAL). */
#define AGGR_GLOBAL 1

#define THREAD_MAP_BYTES 40 /* header, u64 nr = 1, {u64 pid; char comm[16]} */
#define CPU_MAP_BYTES	 16 /* header, u16 type = CPUS, u16 nr = 1, u16 cpu = -1, pad */
#define MAPS_BYTES	 (THREAD_MAP_BYTES + CPU_MAP_BYTES)

/*
 * THREAD_MAP and CPU_MAP records: the counters are per task (this process
 * and what it inherits to) on any CPU, which perf encodes as one thread and
 * the CPU "-1". perf script and perf stat report need them to place STAT
 * records. Returns the bytes written into buf (MAPS_BYTES, zeroed by the caller).
 */
static size_t put_maps(char *buf)
{
	struct perf_event_header *h = (void *)buf;
	uint64_t nr = 1, pid = (uint64_t)autoprof.pid;
	uint16_t cpus[3] = {0 /* PERF_CPU_MAP__CPUS */, 1, UINT16_MAX};
	char comm[16] = "";

	h->type = PERF_RECORD_THREAD_MAP;
	h->size = THREAD_MAP_BYTES;
	memcpy(buf + 8, &nr, 8);
	memcpy(buf + 16, &pid, 8);
	prctl(PR_GET_NAME, comm);
	memcpy(buf + 24, comm, 16);
	h = (void *)(buf + THREAD_MAP_BYTES);
	h->type = PERF_RECORD_CPU_MAP;
	h->size = CPU_MAP_BYTES;
	memcpy(buf + THREAD_MAP_BYTES + 8, cpus, sizeof(cpus));
	return MAPS_BYTES;
}

/*
 * Append THREAD_MAP, CPU_MAP, STAT_CONFIG, one STAT for the sampling event
 * (sampled: the sum of the periods of its samples, what perf report calls the
 * approximate event count), one STAT per counter read (ids first_id,
 * first_id+1, ... in counter order, matching the attrs) and a final
 * STAT_ROUND. Returns 0 or -errno. Async-signal-safe (the emergency path of
 * a deadly signal writes the totals this way, and prints nothing).
 */
int stat__write(struct writer *w, const struct ap_counters *cs, int first_id, uint64_t elapsed,
		uint64_t sampled)
{
	char buf[MAPS_BYTES + sizeof(struct perf_record_stat_config) + 3 * 16 +
		 (1 + AP_MAX_COUNTERS) * sizeof(struct perf_record_stat) +
		 sizeof(struct perf_record_stat_round)];
	struct perf_record_stat_config *cfg;
	struct perf_record_stat *st;
	struct perf_record_stat_round *round;
	size_t len;

	memset(buf, 0, sizeof(buf));
	len = put_maps(buf);
	cfg = (void *)(buf + len);
	cfg->header.type = PERF_RECORD_STAT_CONFIG;
	cfg->header.size = sizeof(*cfg) + 3 * sizeof(cfg->data[0]);
	cfg->nr = 3;
	cfg->data[0] =
	    (struct perf_record_stat_config_entry){PERF_STAT_CONFIG_TERM_AGGR_MODE, AGGR_GLOBAL};
	cfg->data[1] = (struct perf_record_stat_config_entry){PERF_STAT_CONFIG_TERM_INTERVAL, 0};
	cfg->data[2] = (struct perf_record_stat_config_entry){PERF_STAT_CONFIG_TERM_SCALE, 1};
	len += cfg->header.size;
	st = (void *)(buf + len);
	*st = (struct perf_record_stat){.header = {PERF_RECORD_STAT, 0, sizeof(*st)},
					.id = AP_SAMPLE_ID,
					.cpu = UINT32_MAX,
					.val = sampled,
					.ena = elapsed,
					.run = elapsed};
	len += sizeof(*st);

	for (int i = 0, id = first_id; i < cs->n; i++) {
		const struct ap_counter *c = &cs->c[i];

		st = (void *)(buf + len);
		if (c->unsupported)
			continue;
		if (c->valid) {
			st->header.type = PERF_RECORD_STAT;
			st->header.size = sizeof(*st);
			st->id = (uint64_t)id;
			st->cpu =
			    UINT32_MAX; /* the "any CPU" map of a per-task counter, as perf stat */
			st->val = c->raw;
			st->ena = c->ena;
			st->run = c->run;
			len += sizeof(*st);
		}
		id++;
	}
	round = (void *)(buf + len);
	round->header.type = PERF_RECORD_STAT_ROUND;
	round->header.size = sizeof(*round);
	round->type = PERF_STAT_ROUND_TYPE_FINAL;
	round->time = elapsed;
	len += sizeof(*round);
	return writer__append(w, buf, len);
}

static const struct ap_counter *find(const struct ap_counters *cs, const char *name)
{
	for (int i = 0; i < cs->n; i++)
		if (cs->c[i].valid && !strcmp(cs->c[i].name, name))
			return &cs->c[i];
	return NULL;
}

/* 1234567 -> "1,234,567" */
static const char *grouped(uint64_t v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < cap; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

/*
 * Print the totals like `perf stat`: value, name, a derived ratio, and the
 * share of time a multiplexed counter ran. One write per line, on stderr.
 * Nothing when there are no counters: a forked child's totals belong to the
 * process that opened the inherited counters, which prints them once.
 * Not async-signal-safe (stdio formats %f): at a normal exit only, never
 * from a signal handler.
 */
void stat__print(const struct ap_counters *cs, uint64_t elapsed_ns)
{
	const struct ap_counter *clock = find(cs, "task-clock");
	const struct ap_counter *cycles = find(cs, "cycles");
	const struct ap_counter *branches = find(cs, "branches");
	const struct ap_counter *refs = find(cs, "cache-references");
	double secs = (double)elapsed_ns / 1e9;
	char cmd[512], line[256], num[48];
	ssize_t n;

	if (!cs->n)
		return;
	n = ap_read_file("/proc/self/cmdline", cmd, sizeof(cmd));
	for (ssize_t i = 0; i < n - 1; i++)
		if (!cmd[i])
			cmd[i] = ' ';
	dprintf(STDERR_FILENO, "\n Performance counter stats for '%s' (autoprof):\n\n", cmd);
	for (int i = 0; i < cs->n; i++) {
		const struct ap_counter *c = &cs->c[i];
		char ratio[64] = "";
		int len;

		if (!c->valid || (c->ena && !c->run)) { /* lacking, or never scheduled */
			dprintf(STDERR_FILENO, "   %15s      %-24s\n",
				c->valid ? "<not counted>" : "<not supported>", c->name);
			continue;
		}
		if (!strcmp(c->name, "task-clock") || !strcmp(c->name, "cpu-clock")) {
			len = snprintf(line, sizeof(line), "%18.2f msec %-24s",
				       (double)c->value / 1e6, c->name);
			if (elapsed_ns)
				snprintf(ratio, sizeof(ratio), "#  %7.3f CPUs utilized",
					 (double)c->value / (double)elapsed_ns);
		} else {
			len = snprintf(line, sizeof(line), "%18s      %-24s",
				       grouped(c->value, num, sizeof(num)), c->name);
			if (!strcmp(c->name, "instructions") && cycles && cycles->value)
				snprintf(ratio, sizeof(ratio), "#  %7.2f  insn per cycle",
					 (double)c->value / (double)cycles->value);
			else if (!strcmp(c->name, "branch-misses") && branches && branches->value)
				snprintf(ratio, sizeof(ratio), "#  %6.2f%% of all branches",
					 100.0 * (double)c->value / (double)branches->value);
			else if (!strcmp(c->name, "cache-misses") && refs && refs->value)
				snprintf(ratio, sizeof(ratio), "#  %6.2f%% of all cache refs",
					 100.0 * (double)c->value / (double)refs->value);
			else if (!strcmp(c->name, "cycles") && clock && clock->value)
				snprintf(ratio, sizeof(ratio), "#  %7.3f GHz",
					 (double)c->value / (double)clock->value);
			else if (secs > 0)
				snprintf(ratio, sizeof(ratio), "#  %9.3f /sec",
					 (double)c->value / secs);
		}
		if (c->run < c->ena && c->ena)
			dprintf(STDERR_FILENO, "%s %-32s (%.2f%%)\n", line, ratio,
				100.0 * (double)c->run / (double)c->ena);
		else
			dprintf(STDERR_FILENO, "%.*s %s\n", len, line, ratio);
	}
	dprintf(STDERR_FILENO, "\n %17.9f seconds time elapsed\n\n", secs);
}
