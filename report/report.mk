# report.mk - extra rules for autoprof-report, included by the top Makefile.
#
#   make build/fuzz/fuzz-reader   the libFuzzer target (clang, from Debian's clang package)
#   make fuzz                     run it for FUZZ_TIME seconds on tests/fuzz/corpus
#
# `make check` installs clang (a test dependency) and builds the fuzz target;
# tests/report-fuzz.t runs it for a short while.

FUZZ_CC ?= clang
FUZZ_TIME ?= 60
FUZZ_BIN := $(BUILD)/fuzz/fuzz-reader
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer

$(FUZZ_BIN): tests/fuzz/fuzz-reader.c $(REPORT_CORE) $(wildcard report/*.h report/*/*.h) include/autoprof/perf_file.h \
		| $(BUILD)/.deps-test
	@mkdir -p $(@D)
	@echo "  CC FUZZ $@"
	$(Q)$(FUZZ_CC) -std=gnu11 -Wall -Wextra -Wno-missing-field-initializers -Iinclude -Ireport \
		-D_GNU_SOURCE -pthread -g -O1 $(FUZZ_SAN) -o $@ tests/fuzz/fuzz-reader.c \
		$(REPORT_CORE) $(REPORT_LIBS)

CHECK_EXTRA += $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@mkdir -p $(BUILD)/fuzz/corpus
	$(FUZZ_BIN) -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=1024 \
		$(BUILD)/fuzz/corpus tests/fuzz/corpus

.PHONY: fuzz
