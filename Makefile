# autoprof - an LD_PRELOAD sampling profiler that writes perf.data.
#
#   make            build/libautoprof.so, build/libautoprof-memory.so, build/autoprof,
#                   build/autoprof-report
#   make demo       profile the bundled demo program and print the report
#   make check      build everything and run the whole TAP suite with prove
#   make install    PREFIX=/usr/local (DESTDIR honoured)
#
# CC, CFLAGS, LDFLAGS and V=1 may be overridden on the command line.

CC ?= cc
CFLAGS ?= -O2 -g
PREFIX ?= /usr/local
BUILD := build

WARN := -Wall -Wextra -Werror -Wshadow -Wno-missing-field-initializers
BASE := -std=gnu11 $(WARN) -Iinclude -D_GNU_SOURCE -pthread
SAN := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

ifeq ($(V),1)
Q :=
else
Q := @
endif

# The tree: common/ (options, counting events, log, fds: linked into both the
# library and the launcher), launcher/ (the autoprof command), preload/ (the
# injected library: session/, handler/ for what runs in the signal handler,
# wrap/ for the libc functions it interposes, entry.c for its constructor).
COMMON_SRC := $(wildcard common/*.c)
LIB_SRC := $(filter-out preload/memlib/%,$(wildcard preload/*.c preload/*/*.c)) $(COMMON_SRC)
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
# preload/memlib/: the allocator's wrappers, a library of their own
# (libautoprof-memory.so), preloaded only for memory profiles.
MEMLIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(wildcard preload/memlib/*.c))
LIB_CORE := $(filter-out preload/entry.c,$(LIB_SRC))
# launcher/main.c and outside_main.c are the mains of autoprof and autoprof-outside.
LAUNCHER_MAINS := launcher/main.c launcher/outside_main.c
LAUNCHER_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(filter-out $(LAUNCHER_MAINS),$(wildcard launcher/*.c)))
LIB_INC := -Ipreload -Icommon
REPORT_SRC := $(wildcard report/*.c report/*/*.c)
REPORT_CORE := $(filter-out report/main.c,$(REPORT_SRC))
REPORT_OBJ := $(REPORT_SRC:%.c=$(BUILD)/%.o)
REPORT_ASAN_OBJ := $(REPORT_SRC:%.c=$(BUILD)/asan/%.o)
REPORT_LIBS := -lelf -ldw -lz -liberty -ldl

# Unit tests: tests/unit/test-report-*.c link the report core,
# tests/unit/test-preload-*.c the preload library's objects.
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/unit/%)
UNIT_ASAN_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/asan/unit/%)
PROG_SRC := $(filter-out tests/progs/lib%.c,$(wildcard tests/progs/*.c))
PROG_BIN := $(PROG_SRC:tests/progs/%.c=$(BUILD)/progs/%) \
	$(patsubst tests/progs/%.c,$(BUILD)/progs/%.so,$(wildcard tests/progs/lib*.c))

TARGETS := $(BUILD)/libautoprof.so $(BUILD)/libautoprof-memory.so $(BUILD)/autoprof $(BUILD)/autoprof-outside $(BUILD)/autoprof-report
# The manual pages, printed by each program's hidden --man from its option table.
MAN_PAGES := $(BUILD)/man/autoprof.1 $(BUILD)/man/autoprof-report.1
DEPS_STAMP := $(BUILD)/.deps-build

all: $(TARGETS) $(MAN_PAGES)

$(BUILD)/man/%.1: $(BUILD)/%
	@mkdir -p $(@D)
	@echo "  MAN     $@"
	$(Q)$< --man >$@

# Fragments may add prerequisites of `make check` to CHECK_EXTRA.
# make check runs its test files in parallel: CHECK_JOBS at once (prove -j).
CHECK_JOBS ?= 3
CHECK_EXTRA :=
include scripts/bench/bench.mk
include tests/hostile/hostile.mk
-include report/report.mk

$(DEPS_STAMP): scripts/install-deps.sh
	@mkdir -p $(BUILD)
	$(Q)sh scripts/install-deps.sh build
	@touch $@

$(BUILD)/.deps-test: scripts/install-deps.sh
	@mkdir -p $(BUILD)
	$(Q)sh scripts/install-deps.sh test
	@touch $@

# The preload library (and common/, which the launcher links too): hidden
# visibility, version script, no undefined symbols.
LIB_CFLAGS = $(BASE) $(LIB_INC) $(CFLAGS) -fPIC -fvisibility=hidden -fno-omit-frame-pointer
$(BUILD)/preload/%.o: preload/%.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(LIB_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/common/%.o: common/%.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(LIB_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/launcher/%.o: launcher/%.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(BASE) $(LAUNCHER_INC) $(CFLAGS) -MMD -MP -c -o $@ $<

# unwind_user.c and onefile*.c, merge_cmd.c (one run, one file) are the launcher
# files that see the report's types.
LAUNCHER_INC = $(LIB_INC)
$(BUILD)/launcher/unwind_user.o: LAUNCHER_INC = -Ireport -Icommon
$(BUILD)/launcher/onefile.o $(BUILD)/launcher/onefile_merge.o $(BUILD)/launcher/onefile_features.o \
	$(BUILD)/launcher/merge_cmd.o $(BUILD)/launcher/onefile_windows.o: LAUNCHER_INC = -Ireport -Icommon

# The mark where .bss ends (preload/entry.c), where the linker takes GNU ld's INSERT
# (gold and mold do not; entry.c then does without).
BSS_END_LD = $(shell echo 'int x;' | $(CC) -x c -fPIC -shared -o /dev/null - $(LDFLAGS) \
	-Wl,-T,preload/bss_end.ld >/dev/null 2>&1 && echo -Wl,-T,preload/bss_end.ld)

$(BUILD)/libautoprof.so: $(LIB_OBJ) preload/preload.map preload/bss_end.ld
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -pthread -shared -Wl,--version-script=preload/preload.map \
		$(BSS_END_LD) -Wl,--no-undefined -Wl,-z,now -Wl,-z,nodelete -o $@ \
		$(LIB_OBJ) $(LDFLAGS) -ldl

# The allocator's wrappers (memory_link.h): nothing of libautoprof.so linked
# in, nothing of it needed (alone, they pass every call through).
$(BUILD)/libautoprof-memory.so: $(MEMLIB_OBJ) preload/memlib/memlib.map
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -pthread -shared -Wl,--version-script=preload/memlib/memlib.map \
		-Wl,--no-undefined -Wl,-z,now -o $@ $(MEMLIB_OBJ) $(LDFLAGS) -ldl

# Outside mode (launcher/outside*.c) drains the rings with the library's ring
# reader, writes the host and machine features with its file_host.c and
# file_machine.c, and unwinds stack copies with the report's model and unwinder.
LAUNCHER_SHARED := $(BUILD)/preload/handler/ring.o $(BUILD)/preload/handler/record.o $(BUILD)/preload/handler/aggregate.o $(BUILD)/preload/session/file_machine.o \
	$(BUILD)/preload/session/file_host.o $(BUILD)/preload/handler/pages.o \
	$(BUILD)/preload/session/stat_records.o $(BUILD)/preload/handler/whole_file.o \
	$(REPORT_CORE:%.c=$(BUILD)/%.o)
# Both programs link one archive of it all, which gives each only the objects
# its main reaches: autoprof (main.c) leaves the modes that profile from
# outside to autoprof-outside (outside_main.c), and with them the reader's
# model and, --as-needed, libdw and its libraries (launcher.c says why).
LAUNCHER_LINK := $(LAUNCHER_OBJ) $(COMMON_SRC:%.c=$(BUILD)/%.o) $(LAUNCHER_SHARED)
$(BUILD)/launcher.a: $(LAUNCHER_LINK)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^
$(BUILD)/autoprof: $(BUILD)/launcher/main.o | $(BUILD)/autoprof-outside # (it execs it)
$(BUILD)/autoprof-outside: $(BUILD)/launcher/outside_main.o
$(BUILD)/autoprof $(BUILD)/autoprof-outside: $(BUILD)/launcher.a
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -pthread -o $@ $(filter %.o,$^) $(filter %.a,$^) $(LDFLAGS) -Wl,--as-needed \
		-ldl $(if $(filter %/autoprof,$@),$(LAUNCHER_LIBS),$(REPORT_LIBS))
# autoprof starts every profiled run: it is linked static-pie (libelf for
# static_check.c, libz and libc in it), so that no loader opens, maps and
# relocates a shared object before main (on /bin/true: 38 system calls,
# 160,000 instructions and 75 page faults fewer than with libelf, libz and
# libc shared). libpfm4 (event names) and libzstd (compressed inputs) are
# still loaded with dlopen, which a static glibc does with the libc.so of
# the same version.
LAUNCHER_LIBS := -static-pie -lelf -lz
# top_names.c (autoprof top) hashes names with the report's strset__hash (util.h).
$(BUILD)/launcher/top_names.o: LAUNCHER_INC = -Ireport -Icommon

$(BUILD)/report/%.o: report/%.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(BASE) -Ireport $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/autoprof-report: $(REPORT_OBJ) $(BUILD)/common/env_check.o
	@echo "  LD      $@"
	$(Q)$(CC) $(CFLAGS) -pthread -o $@ $^ $(LDFLAGS) $(REPORT_LIBS)

# The sanitizer build of the report tool and the unit tests.
$(BUILD)/asan/report/%.o: report/%.c $(DEPS_STAMP)
	@mkdir -p $(@D)
	@echo "  CC ASAN $<"
	$(Q)$(CC) $(BASE) -Ireport -O1 -g $(SAN) -MMD -MP -c -o $@ $<

$(BUILD)/asan/autoprof-report: $(REPORT_ASAN_OBJ) $(BUILD)/common/env_check.o
	@echo "  LD ASAN $@"
	$(Q)$(CC) -g $(SAN) -pthread -o $@ $^ $(REPORT_LIBS)

$(BUILD)/unit/test-report-%: tests/unit/test-report-%.c $(REPORT_CORE:%.c=$(BUILD)/%.o)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(BASE) -Ireport $(CFLAGS) -Itests -o $@ $^ $(LDFLAGS) $(REPORT_LIBS)

$(BUILD)/asan/unit/test-report-%: tests/unit/test-report-%.c $(REPORT_CORE:%.c=$(BUILD)/asan/%.o)
	@mkdir -p $(@D)
	@echo "  CC ASAN $<"
	$(Q)$(CC) $(BASE) -Ireport -O1 -g $(SAN) -Itests -o $@ $^ $(REPORT_LIBS)

# test-report-built reads the records the library's builders lay out with the
# reader's parser: it links preload/handler/record.c too, as the launcher does.
$(BUILD)/unit/test-report-built: $(BUILD)/preload/handler/record.o
$(BUILD)/unit/test-report-built: private BASE += -Icommon
$(BUILD)/asan/unit/test-report-built: preload/handler/record.c
$(BUILD)/asan/unit/test-report-built: private BASE += -Icommon

$(BUILD)/unit/test-preload-%: tests/unit/test-preload-%.c $(LIB_CORE:%.c=$(BUILD)/%.o)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(BASE) $(CFLAGS) -Itests $(LIB_INC) -o $@ $^ $(LDFLAGS) -ldl

$(BUILD)/asan/unit/test-preload-%: tests/unit/test-preload-%.c $(LIB_CORE)
	@mkdir -p $(@D)
	@echo "  CC ASAN $<"
	$(Q)$(CC) $(BASE) -O1 -g $(SAN) -Itests $(LIB_INC) -o $@ $^ -ldl

# Test programs: -O2 without frame pointers, the hard case for unwinding.
$(BUILD)/progs/%: tests/progs/%.c $(wildcard tests/progs/*.h)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -g -fomit-frame-pointer -pthread -o $@ $< -lm -ldl

$(BUILD)/progs/lib%.so: tests/progs/lib%.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) -std=gnu11 $(WARN) -O2 -g -fomit-frame-pointer -fPIC -shared -o $@ $<

demo: all $(BUILD)/progs/demo
	@echo "== profiling $(BUILD)/progs/demo with $(BUILD)/autoprof"
	$(BUILD)/autoprof -o $(BUILD)/demo.data -- $(BUILD)/progs/demo
	@echo "== $(BUILD)/autoprof-report $(BUILD)/demo.data"
	$(BUILD)/autoprof-report $(BUILD)/demo.data

check: all $(BUILD)/.deps-test $(BUILD)/asan/autoprof-report $(UNIT_BIN) $(UNIT_ASAN_BIN) $(PROG_BIN) \
		$(CHECK_EXTRA)
	prove -f -j$(CHECK_JOBS) $(UNIT_BIN) $(UNIT_ASAN_BIN) tests/*.t

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/autoprof \
		$(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/doc/autoprof/doc
	install -m 755 $(BUILD)/autoprof $(BUILD)/autoprof-report $(DESTDIR)$(PREFIX)/bin/
	install -m 644 $(BUILD)/libautoprof.so $(BUILD)/libautoprof-memory.so \
		$(DESTDIR)$(PREFIX)/lib/autoprof/
	install -m 755 $(BUILD)/autoprof-outside $(DESTDIR)$(PREFIX)/lib/autoprof/
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/autoprof/
	install -m 644 doc/*.md $(DESTDIR)$(PREFIX)/share/doc/autoprof/doc/

format:
	git ls-files '*.c' '*.h' '*.cc' '*.cpp' | xargs clang-format -i

clean:
	rm -rf $(BUILD)

.PHONY: all demo check install format clean
.DELETE_ON_ERROR:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
