# Hostile-program suite (tests/hostile.t, issue 11): the programs it runs
# plain and profiled, built into build/hostile/. Included by the top Makefile;
# `make hostile-progs` builds them (tests/hostile.t calls it itself).
#
# Go and Rust use Debian's toolchains (golang-go, rustc) without network:
# GOCACHE/GOPATH live under build/ so a rebuild costs nothing.

HOSTILE_DIR := $(BUILD)/hostile
HOSTILE_C := $(filter-out tests/hostile/plug.c tests/hostile/runpath.c,$(wildcard tests/hostile/*.c))
HOSTILE_GO := $(firstword $(wildcard /usr/lib/go/bin/go /usr/bin/go) go)
HOSTILE_RUSTC := $(firstword $(wildcard /usr/bin/rustc) rustc)
HOSTILE_CFLAGS := -std=gnu11 $(WARN) -O2 -g -fomit-frame-pointer -pthread
HOSTILE_BIN := $(HOSTILE_C:tests/hostile/%.c=$(HOSTILE_DIR)/%) $(HOSTILE_DIR)/runpath \
	$(HOSTILE_DIR)/lib/libhostplug.so $(HOSTILE_DIR)/throw $(HOSTILE_DIR)/panics \
	$(HOSTILE_DIR)/cgo

$(HOSTILE_DIR)/%: tests/hostile/%.c tests/hostile/hot.h
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(HOSTILE_CFLAGS) -o $@ $< -ldl

$(HOSTILE_DIR)/lib/libhostplug.so: tests/hostile/plug.c
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(HOSTILE_CFLAGS) -fPIC -shared -o $@ $<

# RUNPATH (new dtags) with $ORIGIN: the plugin is found in build/hostile/lib only.
$(HOSTILE_DIR)/runpath: tests/hostile/runpath.c tests/hostile/hot.h
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(HOSTILE_CFLAGS) -Wl,--enable-new-dtags,-rpath,'$$ORIGIN/lib' -o $@ $< -ldl

$(HOSTILE_DIR)/throw: tests/hostile/throw.cc tests/hostile/hot.h
	@mkdir -p $(@D)
	@echo "  CXX     $<"
	$(Q)g++ -std=gnu++17 -Wall -Wextra -Werror -O2 -g -fomit-frame-pointer -pthread -o $@ $<

$(HOSTILE_DIR)/panics: tests/hostile/panics.rs
	@mkdir -p $(@D)
	@echo "  RUSTC   $<"
	$(Q)$(HOSTILE_RUSTC) -O -g -C panic=unwind -o $@ $<

$(HOSTILE_DIR)/cgo: tests/hostile/cgo.go
	@mkdir -p $(@D)/gocache $(@D)/gopath
	@echo "  GO      $<"
	$(Q)cd $(@D) && GOCACHE=$(CURDIR)/$(@D)/gocache GOPATH=$(CURDIR)/$(@D)/gopath \
		GOFLAGS=-mod=mod GOPROXY=off GO111MODULE=off CGO_ENABLED=1 \
		$(HOSTILE_GO) build -o $(CURDIR)/$@ $(CURDIR)/$<

hostile-progs: $(HOSTILE_BIN)

CHECK_EXTRA += $(HOSTILE_BIN)

.PHONY: hostile-progs
