/*
 * Unit test: event names (common/events.c, common/pmu_names.c) and counter
 * groups (common/counting.c). PMU names are encoded against libpfm4's
 * Skylake model (LIBPFM_FORCE_PMU=skl), so they are checked on any machine;
 * opening them needs that PMU, which tests/events.t SKIPs without one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

static struct ap_event ev;
static char why[256];

static int parse(const char *name)
{
	return events__parse(name, &ev, why, sizeof(why));
}

#define CACHE(c, op, res)                                                                          \
	(PERF_COUNT_HW_CACHE_##c | (PERF_COUNT_HW_CACHE_OP_##op << 8) |                            \
	 (PERF_COUNT_HW_CACHE_RESULT_##res << 16))

int main(void)
{
	static struct ap_counters cs;
	struct perf_event_attr attr;

	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	ap_quiet = true; /* the expected warnings stay off the TAP stream */
	plan(30);

	ok(parse("cycles") == 0 && ev.type == PERF_TYPE_HARDWARE &&
	       ev.config == PERF_COUNT_HW_CPU_CYCLES && !ev.levels,
	   "cycles");
	ok(parse("cycles:u") == 0 && ev.levels && !ev.excl_user && ev.excl_kernel && ev.excl_hv,
	   "cycles:u counts user space only");
	ok(parse("instructions:k") == 0 && ev.levels && ev.excl_user && !ev.excl_kernel,
	   "instructions:k counts the kernel only");
	ok(parse("cycles:ppp") == 0 && ev.precise == 3 && !ev.levels, ":ppp asks precise_ip 3");
	ok(parse("cpu-clock:uk") == 0 && ev.type == PERF_TYPE_SOFTWARE && !ev.excl_user &&
	       !ev.excl_kernel && ev.excl_hv,
	   "cpu-clock:uk");
	ok(parse("cycles:x") != 0, "an unknown modifier is refused");
	ok(parse("L1-dcache-load-misses") == 0 && ev.type == PERF_TYPE_HW_CACHE &&
	       ev.config == CACHE(L1D, READ, MISS),
	   "L1-dcache-load-misses");
	ok(parse("L1-dcache-loads") == 0 && ev.config == CACHE(L1D, READ, ACCESS),
	   "L1-dcache-loads");
	ok(parse("LLC-store-misses") == 0 && ev.config == CACHE(LL, WRITE, MISS),
	   "LLC-store-misses");
	ok(parse("dTLB-load-misses") == 0 && ev.config == CACHE(DTLB, READ, MISS),
	   "dTLB-load-misses");
	ok(parse("iTLB-loads") == 0 && ev.config == CACHE(ITLB, READ, ACCESS), "iTLB-loads");
	ok(parse("branch-load-misses") == 0 && ev.config == CACHE(BPU, READ, MISS),
	   "branch-load-misses");
	ok(parse("L1-icache-load-misses:u") == 0 && ev.config == CACHE(L1I, READ, MISS) &&
	       ev.levels && ev.excl_kernel,
	   "a cache event with a modifier");
	ok(parse("LLC-prefetch-misses") == 0 && ev.config == CACHE(LL, PREFETCH, MISS),
	   "LLC-prefetch-misses");
	ok(parse("L1-dcache-bogus") != 0, "a cache event with a bad operation is refused");

	/* The PMU's own names, through libpfm4's Skylake tables. */
	ok(parse("INST_RETIRED.ANY") == 0 && ev.pmu_named && ev.type == PERF_TYPE_RAW &&
	       ev.config == 0xc0,
	   "INST_RETIRED.ANY (a fixed counter) is 0xc0 on Skylake");
	ok(parse("MEM_LOAD_RETIRED.L3_MISS") == 0 && ev.type == PERF_TYPE_RAW &&
	       ev.config == 0x20d1,
	   "MEM_LOAD_RETIRED.L3_MISS is event 0xd1 umask 0x20");
	ok(parse("MEM_LOAD_RETIRED:L3_MISS") == 0 && ev.config == 0x20d1,
	   "libpfm4's own spelling EVENT:UMASK");
	ok(parse("MEM_LOAD_RETIRED.L3_MISS:c=2") == 0 && ev.config == 0x20020d1,
	   "a libpfm4 modifier (cmask) is encoded");
	ok(parse("MEM_LOAD_RETIRED.L3_MISS:u") == 0 && ev.config == 0x20d1 && ev.levels &&
	       ev.excl_kernel && !ev.excl_user,
	   "perf's :u modifier on a PMU name");
	ok(parse("skl::INST_RETIRED:ANY_P:k") == 0 && ev.config == 0xc0 && ev.levels &&
	       ev.excl_user && !ev.excl_kernel,
	   "a PMU-qualified name with libpfm4's k modifier");
	ok(parse("CPU_CLK_UNHALTED.THREAD") == 0 && ev.config == 0x3c,
	   "CPU_CLK_UNHALTED.THREAD (fixed counter) is 0x3c");
	ok(parse("INST_RETIRED.NO_SUCH_UMASK") != 0 && why[0],
	   "an unknown umask is refused with a reason");
	ok(parse("NO_SUCH_EVENT") == -ENOENT && strstr(why, "skl"),
	   "an unknown name is refused, naming the PMU model searched");

	memset(&attr, 0, sizeof(attr));
	attr.exclude_kernel = 1;
	parse("MEM_LOAD_RETIRED.L3_MISS:k");
	events__apply(&ev, &attr);
	ok(attr.type == PERF_TYPE_RAW && attr.config == 0x20d1 && !attr.exclude_kernel &&
	       attr.exclude_user,
	   "apply() sets the configs and the levels the name chose");

	/* Counter lists and groups. */
	ok(counting__parse(&cs, "task-clock,{cycles,instructions},{branches,branch-misses}") == 0 &&
	       cs.n == 5 && cs.c[0].leader == 0 && cs.c[1].leader == 1 && cs.c[2].leader == 1 &&
	       cs.c[3].leader == 3 && cs.c[4].leader == 3,
	   "{a,b} makes a group led by its first counter");
	ok(counting__parse(&cs, "{cycles,instructions") == -EINVAL, "an unclosed group is refused");
	ok(counting__parse(&cs, "{cycles,{instructions}}") == -EINVAL, "a nested group is refused");
	ok(counting__parse(&cs, "INST_RETIRED.ANY,MEM_LOAD_RETIRED.L3_MISS:c=2") == 0 &&
	       cs.n == 2 && cs.c[1].ev.config == 0x20020d1,
	   "PMU names as counters");
	ok(counting__parse(&cs, "{task-clock,page-faults}") == 0 && counting__open(&cs, false) == 2,
	   "a software group opens (counting)");
	counting__close(&cs);
	return tap_done();
}
