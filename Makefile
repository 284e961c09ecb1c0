# asyncore build.  `make` builds ./asyncore; see README.md for the rest.

CC      ?= cc
PKGS    := libelf libdw sqlite3 jansson libzstd liblzma liblz4 zlib libsystemd
DEB_PKGS := gcc g++ make gdb pkg-config libelf-dev libdw-dev libsqlite3-dev \
	libjansson-dev libzstd-dev liblzma-dev liblz4-dev zlib1g-dev libsystemd-dev elfutils \
	python3 zstd xz-utils lz4 sqlite3 binutils

OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Wshadow -Wvla -Werror
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null)
CFLAGS  += -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) $(PKG_CFLAGS) $(SAN)
LDFLAGS += $(SAN)
# libstdc++ only provides the demangler: linked statically, it costs no
# start-up relocations.
LDLIBS  += $(PKG_LIBS) -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic -lpthread -lm

BUILD   ?= build
OBJDIR  := $(BUILD)/obj
MODULES := corefile dwarf analyzer reports cli
LIB_SRCS := $(foreach m,$(MODULES),$(wildcard $(m)/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(OBJDIR)/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/unit/%)
PROGRAM ?= asyncore

.PHONY: all deps check demo bench asan ubsan clean unit

all: deps $(PROGRAM)

# Install the Debian packages the project needs when any is missing.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" -ne 0 ] && SUDO=sudo; \
		$$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null || exit 1; \
	fi

$(PROGRAM): $(OBJDIR)/asyncore.o $(LIB_OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(OBJDIR)/%.o: %.c $(wildcard */*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/unit/%: tests/unit/%.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIB_OBJS) $(LDLIBS)

unit: $(UNIT_BINS)

check: all unit
	@ASYNCORE=$(CURDIR)/$(PROGRAM) UNIT_DIR=$(CURDIR)/$(BUILD)/unit tests/run

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

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
