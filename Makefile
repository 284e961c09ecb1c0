# asyncore build.  `make` builds ./asyncore; see README.md for the rest.

CC      ?= cc
PKGS    := libelf libdw sqlite3 jansson libzstd liblzma liblz4 zlib nettle
# Headers only: opened with dlopen() when used (reports/clickhouse.c,
# analyzer/insn.c, cli/serve.c, corefile/journal.c).
DLOPEN_PKGS := libcurl capstone libmicrohttpd libsystemd
DEB_PKGS := gcc g++ make gdb pkg-config libelf-dev libdw-dev libsqlite3-dev \
	libjansson-dev libzstd-dev liblzma-dev liblz4-dev zlib1g-dev libsystemd-dev \
	libdebuginfod-dev libcurl4-openssl-dev nettle-dev elfutils python3 zstd xz-utils lz4 sqlite3 \
	binutils libiberty-dev libcapstone-dev libmicrohttpd-dev

OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wvla -Werror
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) $(DLOPEN_PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(PKG_CFLAGS) $(SAN)
LDFLAGS += $(SAN)
# libiberty (static only) provides the demanglers: C++, Rust legacy and v0.
LDLIBS  += $(PKG_LIBS) -liberty -lpthread -lm

BUILD   ?= build
OBJDIR  := $(BUILD)/obj
MODULES := base corefile dwarf analyzer reports cli
LIB_SRCS := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJDIR)/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)
UNIT_HELPER_OBJS := $(OBJDIR)/tests/unit/craft.o
# The program the unit tests read (never run) and its stripped copy; CPython
# 3.11's, 3.10's and 3.8's line tables and lines (tests/cpython_lines.py).
UNIT_DATA := $(BUILD)/unit/data/unit_fixture $(BUILD)/unit/data/unit_fixture.stripped \
	$(BUILD)/unit/data/cpython311_lines.txt $(BUILD)/unit/data/cpython310_lines.txt \
	$(BUILD)/unit/data/cpython38_lines.txt $(BUILD)/unit/data/many_symbols.so
PROGRAM ?= asyncore

.PHONY: all deps test-deps check demo bench asan ubsan clean unit install uninstall fuzz fuzz-tools soak

all: deps $(PROGRAM)

# apt_missing PACKAGES EXTRA: install those of PACKAGES (plus the shell
# words EXTRA adds to $missing) that are not installed.
apt_missing = missing=""; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	$(2) \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

# Install the Debian packages the project needs when any is missing.
deps:
	@$(call apt_missing,$(DEB_PKGS),command -v rustc >/dev/null || [ -x "$$HOME/.cargo/bin/rustc" ] || missing="$$missing rustc";)

# What the test suite builds before it runs needs these (the Go program
# test_gopclntab reads); the tests install the rest they use themselves.
# A failed install is no build failure: what needs it is not built and its
# test skips, saying why.
# Debian's arm64 python3.11 and python3.13 (with their debug files) are
# unpacked into sysroots under the build tree, never installed
# (tests/aarch64_python.sh).
TEST_DEB_PKGS := golang-go
AARCH64_PYTHON := $(BUILD)/aarch64-python
test-deps:
	@($(call apt_missing,$(TEST_DEB_PKGS),)) || echo "test-deps: installing $(TEST_DEB_PKGS) failed"
	@sh tests/aarch64_python.sh $(AARCH64_PYTHON) || \
		echo "test-deps: Debian's arm64 CPythons could not all be unpacked under $(AARCH64_PYTHON)"

# lldb and liblldb-dev: llnode (npm's), built under the build tree by
# tests/t_node.sh, is a second oracle of node's cores.
TEST_DEB_PKGS += lldb liblldb-dev

# A program built elsewhere than the checkout (make asan, make ubsan) finds
# share/ beside it, as ./asyncore does.
$(PROGRAM): $(OBJDIR)/asyncore.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	@[ "$(dir $@)" = ./ ] || ln -sfn $(CURDIR)/share $(dir $@)share

$(OBJDIR)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(UNIT_HELPER_OBJS) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(UNIT_HELPER_OBJS) $(LIB_OBJS) $(LDLIBS)

$(UNIT_HELPER_OBJS): $(wildcard tests/unit/*.h)

# -O0 without sanitizers: its line table and inline levels are the source's.
# -rdynamic exports its symbols, so the stripped copy keeps them in .dynsym.
$(BUILD)/unit/data/unit_fixture: tests/unit/data/unit_fixture.c tests/unit/data/unit_fixture.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -g -O0 -fno-omit-frame-pointer -rdynamic -o $@ $<

$(BUILD)/unit/data/unit_fixture.stripped: $(BUILD)/unit/data/unit_fixture
	strip -o $@ $<

$(BUILD)/unit/data/many_symbols.so: tests/unit/data/many_symbols.sh
	@mkdir -p $(dir $@)
	sh $< 30000 > $(BUILD)/unit/data/many_symbols.s
	$(CC) -shared -nostdlib -o $@ $(BUILD)/unit/data/many_symbols.s

# The Go program test_gopclntab reads and runs, and its -s -w build; when
# go is missing they are not built and the test skips.
GO_UNIT_DATA := $(BUILD)/unit/data/gopcln $(BUILD)/unit/data/gopcln.stripped
GO_BUILD = if command -v go >/dev/null; then \
		GOCACHE=$(abspath $(BUILD))/go-cache GOFLAGS= go build $(1) -o $@ $<; \
	else echo "go not found: $@ not built"; fi

$(GO_UNIT_DATA): | test-deps

$(BUILD)/unit/data/gopcln: tests/unit/data/gopcln.go
	@mkdir -p $(dir $@)
	@$(call GO_BUILD,)

$(BUILD)/unit/data/gopcln.stripped: tests/unit/data/gopcln.go
	@mkdir -p $(dir $@)
	@$(call GO_BUILD,-ldflags='-s -w')

$(BUILD)/unit/data/cpython%_lines.txt: tests/unit/data/cpython%_lines.txt
	@mkdir -p $(dir $@)
	cp $< $@

# The program with the test suite's hold points (cli/test_hooks.h): the
# files that have one are built again with ASYNCORE_TEST_HOOKS, the rest is
# the program's own objects; it finds share/ as ./asyncore does.  Only the
# tests run it.
HOOKS_PROGRAM := $(BUILD)/hooks/asyncore
HOOKED_SRCS := cli/ingest_worker.c cli/collect.c cli/collect_install.c cli/serve.c cli/live.c
HOOKS_OBJS := $(OBJDIR)/asyncore.o $(filter-out $(HOOKED_SRCS:%.c=$(OBJDIR)/%.o),$(LIB_OBJS)) \
	$(HOOKED_SRCS:%.c=$(BUILD)/hooks/obj/%.o) $(BUILD)/hooks/obj/tests/hooks/hold.o \
	$(BUILD)/hooks/obj/tests/hooks/query_limit.o

$(BUILD)/hooks/obj/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -DASYNCORE_TEST_HOOKS -c -o $@ $<

$(HOOKS_PROGRAM): $(HOOKS_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
	ln -sfn $(CURDIR)/share $(dir $@)share

# The scripts' JSON check (tests/lib.sh json_ok).
$(BUILD)/unit/json_ok: tests/unit/json_ok.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -ljansson

unit: $(UNIT_BINS) $(UNIT_DATA) $(GO_UNIT_DATA) $(HOOKS_PROGRAM) $(BUILD)/unit/json_ok

# The libFuzzer harnesses built with the project's compiler and a plain
# main() (fuzz/replay.c), to replay the corpora and crashers under
# fixtures/fuzz/, and the mutation driver; tests/t_fuzz.sh and
# tests/t_mutate.sh run them.  (fuzz/build.sh builds the harnesses with
# clang and libFuzzer for `make fuzz`.)
FUZZ_TARGETS := fuzz_core fuzz_notes fuzz_segments fuzz_folly fuzz_recorder fuzz_recfmt \
	fuzz_bthread fuzz_runtime fuzz_rtdesc fuzz_args fuzz_gopclntab fuzz_minidump
FUZZ_TOOLS := $(FUZZ_TARGETS:%=$(BUILD)/fuzz-replay/%) $(BUILD)/fuzz-replay/mutate
FUZZ_SUPPORT := fuzz/patch.c

$(BUILD)/fuzz-replay/mutate: fuzz/mutate.c $(FUZZ_SUPPORT) $(wildcard fuzz/*.h) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(FUZZ_SUPPORT) $(LIB_OBJS) $(LDLIBS)

$(BUILD)/fuzz-replay/fuzz_%: fuzz/fuzz_%.c fuzz/replay.c $(FUZZ_SUPPORT) $(wildcard fuzz/*.h) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< fuzz/replay.c $(FUZZ_SUPPORT) $(LIB_OBJS) $(LDLIBS)

fuzz-tools: $(FUZZ_TOOLS)

check: all unit fuzz-tools
	@ASYNCORE=$(CURDIR)/$(PROGRAM) UNIT_DIR=$(CURDIR)/$(BUILD)/unit \
		ASYNCORE_HOOKS=$(CURDIR)/$(HOOKS_PROGRAM) tests/run

# libFuzzer on every harness for FUZZ_SECONDS each (clang); new coverage is
# merged into the corpora under fixtures/fuzz/corpus/, crashers are left in
# build/fuzz/artifacts/ (see fuzz/README.md).
FUZZ_SECONDS ?= 60
fuzz:
	fuzz/build.sh
	fuzz/run.sh $(FUZZ_SECONDS)

# The mutation test at length: SOAK_MUTANTS mutants of the fixture cores
# (make check runs 1,000).
SOAK_MUTANTS ?= 100000
soak: all fuzz-tools
	@ASYNCORE=$(CURDIR)/$(PROGRAM) UNIT_DIR=$(CURDIR)/$(BUILD)/unit MUTANTS=$(SOAK_MUTANTS) \
		tests/run t_mutate

demo: all
	@fixtures/demo/run-demo $(CURDIR)/$(PROGRAM)

bench: all
	@bench/run $(CURDIR)/$(PROGRAM)

asan:
	$(MAKE) BUILD=build/asan PROGRAM=build/asan/asyncore OPT="-O1 -g" \
		SAN="-fsanitize=address -fno-omit-frame-pointer" check

ubsan:
	$(MAKE) BUILD=build/ubsan PROGRAM=build/ubsan/asyncore OPT="-O1 -g" \
		SAN="-fsanitize=undefined -fno-sanitize-recover=undefined" check

clean:
	rm -rf build asyncore

# Installing: PREFIX (default /usr/local) and DESTDIR as usual.  The binary
# finds PREFIX/share/asyncore relative to itself, so DESTDIR installs work.
PREFIX  ?= /usr/local
BINDIR  := $(DESTDIR)$(PREFIX)/bin
MANDIR  := $(DESTDIR)$(PREFIX)/share/man/man1
SHAREDIR := $(DESTDIR)$(PREFIX)/share/asyncore
COMPDIR := $(DESTDIR)$(PREFIX)/share/bash-completion/completions
RUNTIMES := $(wildcard share/asyncore/runtimes/*.json)

install: $(PROGRAM)
	install -d $(BINDIR) $(MANDIR) $(SHAREDIR)/runtimes $(COMPDIR)
	install -m 755 $(PROGRAM) $(BINDIR)/asyncore
	install -m 644 doc/asyncore.1 $(MANDIR)/asyncore.1
	install -m 644 doc/asyncore.bash $(COMPDIR)/asyncore
	$(if $(RUNTIMES),install -m 644 $(RUNTIMES) $(SHAREDIR)/runtimes/)

uninstall:
	rm -f $(BINDIR)/asyncore $(MANDIR)/asyncore.1 $(COMPDIR)/asyncore
	rm -f $(addprefix $(SHAREDIR)/runtimes/,$(notdir $(RUNTIMES)))
	-rmdir $(SHAREDIR)/runtimes $(SHAREDIR) 2>/dev/null

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
