# Benchmark targets (included by the top Makefile). Not part of `make check`.
#
#   make bench-overhead   the sampling engine's overhead benchmark (about 6-7
#                         minutes): prints a Markdown report and writes it to
#                         build/bench/overhead.md, the raw numbers to
#                         build/bench/overhead.json. BENCH_ARGS="--rounds 11
#                         --budget 600" etc. are passed to scripts/bench/overhead.py.

BENCH_DIR := $(BUILD)/bench
BENCH_ARGS ?=

# The kernel's sampling cost floor: per-thread cpu-clock events and rings, no reader.
$(BENCH_DIR)/libfloor.so: scripts/bench/floor.c scripts/bench/bench.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -fPIC -shared -pthread -Wall -Wextra -Werror \
		-o $@ $< -ldl

# The floor of allocation profiling by interposition (bench-memory): malloc,
# free, calloc and realloc that only call libc's.
$(BENCH_DIR)/libmemfloor.so: scripts/bench/memfloor.c scripts/bench/bench.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -fPIC -shared -Wall -Wextra -Werror -o $@ $< -ldl

# The kernel's cost of mapping a perf.data file's records once (bench-report).
$(BENCH_DIR)/mapfloor: scripts/bench/mapfloor.c include/autoprof/perf_file.h scripts/bench/bench.mk
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -Iinclude -o $@ $<

BENCH_OVERHEAD_DEPS := $(BUILD)/libautoprof.so $(BUILD)/autoprof $(BENCH_DIR)/libfloor.so \
	$(BUILD)/progs/demo $(BUILD)/progs/split $(BUILD)/progs/mtwork

bench-overhead: $(BENCH_OVERHEAD_DEPS)
	$(Q)python3 scripts/bench/overhead.py --build $(BUILD) --out $(BENCH_DIR)/overhead.md \
		$(BENCH_GUARD) $(BENCH_ARGS)

.PHONY: bench-overhead

# ---------------------------------------------------------------------------
# Every timing benchmark here (bench-overhead above; bench, bench-report,
# bench-service, bench-cost, bench-cost-quick, bench-outside-cost,
# bench-memory below) refuses a busy machine (scripts/bench/quiet.py; the
# shell script through its command line): the 1-minute load average at the
# start, waited for up to --quiet-wait s, and other processes' CPU and steal
# during each round; one line on stderr, exit status 3. Each takes the same
# flags, --busy-ok (report anyway, every figure marked "(busy)"),
# --max-load L, --max-foreign C, --quiet-wait S (doc/benchmarks.md), in its
# own variable (BENCH_FLAGS, COST_FLAGS, REPORT_SPEED_FLAGS,
# BENCH_SERVICE_FLAGS, MEMORY_FLAGS, BENCH_ARGS, BENCH_OUTSIDE_COST_FLAGS),
# and in BENCH_GUARD for all of them at once: `make bench
# BENCH_GUARD=--busy-ok`. The durations below are for a quiet 2-CPU VM;
# those not measured say so.
BENCH_GUARD ?=

# make bench (issues 6, 25, 26): runs, one after the other (each waits for
# the machine to settle after the one before):
#   bench.py        autoprof against perf record and gperftools: overhead,
#                   truth, stacks, delivered rate, output size, start-up,
#                   report speed -> scripts/bench/RESULTS.md (raw:
#                   build/bench/bench.json); 7.4 minutes (2026-11-23);
#                   BENCH_FLAGS="--quick" for a 1-round smoke run
#   cost.py         the per-sample cost at 1, 4, 10 kHz (bench-cost below)
#                   -> scripts/bench/COST.md; about 10 minutes (estimated:
#                   720 runs of about 0.7 s of CPU; the quick form's 225
#                   runs took 5.4 minutes)
#   report_speed.py bench-report below -> scripts/bench/REPORT-SPEED.md;
#                   about 5 minutes (not re-measured since issue 12), plus
#                   a few minutes the first time to make the day of windows
#   service.py      bench-service below -> build/bench/service.md; about
#                   2.5 minutes (estimated: two 1-minute runs and 60 ctl
#                   requests)
#   memory.py       bench-memory below -> build/bench/memory.md; about 13
#                   minutes (estimated from its programs' plain times and
#                   the ratios in doc/memory.md)
# About 40 minutes in all (each report says how long it took). Installs the
# packages it needs. Not part of `make check`.
BENCH_FLAGS ?=

$(BUILD)/.deps-bench: scripts/install-deps.sh
	@mkdir -p $(BUILD)
	$(Q)sh scripts/install-deps.sh bench
	@touch $@

BENCH_COST_RUN = python3 scripts/bench/cost.py --build $(BUILD) --out scripts/bench/COST.md \
	--raw $(BENCH_DIR)/cost.json $(BENCH_GUARD) $(COST_FLAGS)
BENCH_REPORT_RUN = python3 scripts/bench/report_speed.py --build $(BUILD) \
	--out scripts/bench/REPORT-SPEED.md $(BENCH_GUARD) $(REPORT_SPEED_FLAGS)
BENCH_SERVICE_RUN = python3 scripts/bench/service.py --build $(BUILD) --out $(BENCH_DIR)/service.md \
	$(BENCH_GUARD) $(BENCH_SERVICE_FLAGS)
BENCH_MEMORY_RUN = python3 scripts/bench/memory.py --build $(BUILD) --runs $(MEMORY_RUNS) \
	--out $(BENCH_DIR)/memory.md $(BENCH_GUARD) $(MEMORY_FLAGS)

bench: $(BUILD)/.deps-bench $(BUILD)/libautoprof.so $(BUILD)/libautoprof-memory.so \
		$(BUILD)/autoprof $(BUILD)/autoprof-report \
		$(BENCH_DIR)/libfloor.so $(BENCH_DIR)/libmemfloor.so $(BENCH_DIR)/mapfloor \
		$(BUILD)/progs/demo $(BUILD)/progs/mtwork $(BUILD)/progs/truth $(BUILD)/progs/costloop $(BUILD)/progs/service
	$(Q)python3 scripts/bench/bench.py --build $(BUILD) --out scripts/bench/RESULTS.md \
		$(BENCH_GUARD) $(BENCH_FLAGS)
	$(Q)$(BENCH_COST_RUN)
	$(Q)$(BENCH_REPORT_RUN)
	$(Q)$(BENCH_SERVICE_RUN)
	$(Q)$(BENCH_MEMORY_RUN)

# make bench-report (issues 12, 26): autoprof-report against perf report
# --stdio on files of 300k+ samples of a 4-thread program (-g, -g user only,
# --call-graph dwarf, the preload's own file): medians of wall time, CPU time
# and peak RSS, and the ratios, written to scripts/bench/REPORT-SPEED.md.
# About 5 minutes (most of it perf report on the 2-3 GB dwarf file).
# REPORT_SPEED_FLAGS="--runs 3 --keep DIR" reuses recordings kept in DIR.
# Then a day of windows (issue 26): 8 processes x 1,440 aggregated windows made
# by scripts/bench/report_day.py into $TMPDIR/autoprof-day (once), read in one
# report; REPORT_SPEED_FLAGS="--only day" runs that case alone (about a minute
# once the set is made).
REPORT_SPEED_FLAGS ?=

bench-report: $(BUILD)/autoprof-report $(BUILD)/libautoprof.so $(BUILD)/progs/mtwork \
		$(BUILD)/autoprof $(BUILD)/progs/demo $(BENCH_DIR)/mapfloor
	$(Q)$(BENCH_REPORT_RUN)

.PHONY: bench bench-report

# make bench-service (issue 13): `autoprof ctl` start/stop/dump/status
# latency, the disk use of a 4-thread service at 1 kHz with
# AUTOPROF_WINDOW=60s and AUTOPROF_AGGREGATE=1 (1 minute, extrapolated to 10;
# BENCH_SERVICE_FLAGS="--full" runs the 10 minutes), and its extra resident
# memory; writes build/bench/service.md. About 2.5 minutes (estimated).
BENCH_SERVICE_FLAGS ?=

bench-service: $(BUILD)/libautoprof.so $(BUILD)/autoprof $(BUILD)/autoprof-report \
		$(BUILD)/progs/service
	$(Q)$(BENCH_SERVICE_RUN)

.PHONY: bench-service

# make bench-cost (issues 15, 26): the per-sample cost of sampling, part by
# part: build/progs/costloop (shallow, 2 x CPUs threads, deep), xz -9, python3,
# sort, plain and under the floor, floor+batch, the floor with a signal per
# sample, autoprof batched and unbatched, and perf record -g, at 1, 4 and
# 10 kHz, interleaved within each round; the handler's own phases
# (AUTOPROF_COST=1). Refuses a busy machine (exit 3; COST_FLAGS=--busy-ok
# marks every figure instead). Writes scripts/bench/COST.md. About 10
# minutes (estimated, see make bench); COST_FLAGS="--rounds 3 --rates 10000" etc.
# make bench-cost-quick: issue 26's three shapes x 1, 4, 10 kHz x plain,
# floor, floor+batch, autoprof, perf -g, 5 rounds, 5.4 minutes (2026-11-26,
# quiet); writes
# build/bench/cost-quick.md (doc/benchmarks.md: how to read it).
COST_FLAGS ?=
COST_DEPS := $(BUILD)/libautoprof.so $(BENCH_DIR)/libfloor.so $(BUILD)/progs/costloop

bench-cost: $(COST_DEPS)
	$(Q)$(BENCH_COST_RUN)

bench-cost-quick: $(COST_DEPS)
	$(Q)python3 scripts/bench/cost.py --quick --build $(BUILD) --out $(BENCH_DIR)/cost-quick.md \
		--raw $(BENCH_DIR)/cost-quick.json $(BENCH_GUARD) $(COST_FLAGS)

.PHONY: bench-cost bench-cost-quick

# ---------------------------------------------------------------------------
# make bench-outside (issue 20, doc/outside.md): outside mode against perf
# record on static C (glibc, musl), raw clones, a static process tree, Go
# static and PIE, and -p: sample counts and stack completeness, medians of
# BENCH_OUTSIDE_RUNS runs (default 5). No timing. Not part of `make check`.
BENCH_OUTSIDE_RUNS ?= 5

bench-outside: $(BUILD)/autoprof
	$(Q)sh scripts/bench/outside.sh $(BENCH_OUTSIDE_RUNS)

.PHONY: bench-outside

# make bench-outside-cost (issue 20): outside mode's CPU cost at 1 kHz against
# perf record -g (and --call-graph dwarf, and perf without stacks as the
# floor) on a static C program, raw clone threads and Go CGO_ENABLED=0:
# medians of BENCH_OUTSIDE_COST_RUNS interleaved rounds (default 7), with
# the load average; a Markdown table on stdout, the raw times in
# build/bench/outside-cost.tsv. Refuses a busy machine like the others
# (BENCH_OUTSIDE_COST_FLAGS=--busy-ok marks every figure instead).
BENCH_OUTSIDE_COST_RUNS ?= 7
BENCH_OUTSIDE_COST_FLAGS ?=

bench-outside-cost: $(BUILD)/autoprof
	$(Q)RUNS=$(BENCH_OUTSIDE_COST_RUNS) OUT=$(BENCH_DIR)/outside-cost.tsv sh scripts/bench/outside-cost.sh \
		$(BENCH_GUARD) $(BENCH_OUTSIDE_COST_FLAGS)

.PHONY: bench-outside-cost

# make bench-memory (issue 25, doc/memory.md): CPU time of a
# std::map<std::string,int> program, a 4-thread malloc loop and python3,
# plain and under autoprof, autoprof --memory (default interval and 1),
# heaptrack and gperftools' HEAPPROFILE, in interleaved pairs, MEMORY_RUNS
# rounds (medians [min-max]), the targets MET/MISSED; then the profiler's
# memory apart (the program's peak RSS, the launcher's or heaptrack's own
# processes', the files written). Writes build/bench/memory.md. About 13
# minutes (estimated); MEMORY_FLAGS="--quick" for a smoke run,
# "--gperftools all|none" (default: once per program, not on small mallocs).
MEMORY_RUNS ?= 5
MEMORY_FLAGS ?=

bench-memory: $(BUILD)/.deps-bench $(BUILD)/libautoprof.so $(BUILD)/libautoprof-memory.so \
		$(BUILD)/autoprof \
		$(BENCH_DIR)/libmemfloor.so
	$(Q)$(BENCH_MEMORY_RUN)

.PHONY: bench-memory
