# bitwire - build, test, demo, bench, install.  `make help` lists targets.
LUA_VERSION ?= 5.4
LUA         ?= lua$(LUA_VERSION)
LUA_INCDIR  ?=
LUA_CFLAGS  ?= $(if $(LUA_INCDIR),-I$(LUA_INCDIR),$(shell pkg-config --cflags lua$(LUA_VERSION) 2>/dev/null))
CC          ?= cc
CFLAGS      ?= -O2 -g
WARN         = -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# compressed floats must round every float32 step exactly as serialize.h does
FPFLAGS      = -ffp-contract=off
LIBFLAG     ?= -shared
# calls into liblua and between our own functions skip the PLT
MODFLAGS    ?= -fno-plt -fno-semantic-interposition
PREFIX      ?= /usr/local
INST_LIBDIR ?= $(PREFIX)/lib/lua/$(LUA_VERSION)
INST_LUADIR ?= $(PREFIX)/share/lua/$(LUA_VERSION)
BUSTED      ?= $(LUA) /usr/bin/busted
SANFLAGS     = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SECONDS ?= 6

# Debian packages the build, the tests and the benchmarks need
DEB_PKGS = liblua5.4-dev lua5.4 lua-busted lua-cjson lua-messagepack \
           zlib1g-dev pkg-config clang libclang-rt-14-dev valgrind

CORE_SRC = core/bw_stream.c core/bw_schema.c core/bw_game.c
BIND_SRC = bindings/lbw.c bindings/lbw_schema.c
CORE_HDR = core/bw.h core/bw_schema.h
ALL_CFLAGS = $(WARN) $(FPFLAGS) -Icore $(CFLAGS)
LIBS = -lz -lm

BUSTED_ENV = LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/?.so;;"

.PHONY: all deps check spec test demo bench sanitize fuzz valgrind lint \
        install uninstall clean help bandwidth

all: deps build/bitwire/core.so

help:
	@echo "make [all]    build build/bitwire/core.so"
	@echo "make test     install missing packages, build, run C tests and specs"
	@echo "make demo     run the end-to-end example"
	@echo "make bench    C stream and Lua schema benchmarks"
	@echo "make bandwidth  sizes of the game-state encodings (docs/BANDWIDTH.md)"
	@echo "make sanitize C tests and specs under ASan+UBSan"
	@echo "make fuzz     libFuzzer targets, FUZZ_SECONDS each"
	@echo "make fuzz-short  the same for FUZZ_SHORT_SECONDS each (for make test)"
	@echo "make valgrind busted suite under memcheck"
	@echo "make install  PREFIX=... DESTDIR=..."

# Installs only what is missing; sudo when not root.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

build/bitwire/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) bindings/lbw.h
	@mkdir -p build/bitwire
	$(CC) $(ALL_CFLAGS) $(MODFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) -o $@ $(CORE_SRC) $(BIND_SRC) $(LIBS)

build/test_%: core/test/test_%.c $(CORE_SRC) $(CORE_HDR) core/test/check.h
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ $< $(CORE_SRC) $(LIBS)

C_TESTS = $(patsubst core/test/test_%.c,build/test_%,$(wildcard core/test/test_*.c)) \
          build/test_share

# schemas shared across lua_States and threads: links liblua (a test, not
# the module) and requires bitwire from ./lua and ./build at run time
LUA_LIBS ?= $(shell pkg-config --libs lua$(LUA_VERSION) 2>/dev/null)
build/test_share: bindings/test/test_share.c core/test/check.h build/bitwire/core.so
	$(CC) $(WARN) $(CFLAGS) -Icore/test $(LUA_CFLAGS) -pthread -o $@ $< $(LUA_LIBS)

check: deps $(C_TESTS)
	@for t in $(C_TESTS); do ./$$t || exit 1; done

spec: all
	@$(BUSTED_ENV) $(BUSTED) -o utfTerminal spec

# Counts every C check and busted case into one closing line.
test: deps all $(C_TESTS)
	@$(LUA) tools/runtests.lua "$(BUSTED)" $(C_TESTS)

demo: all
	@$(BUSTED_ENV) $(LUA) examples/demo.lua

# prints the tables of docs/BANDWIDTH.md; BANDWIDTH_ARGS="--write docs/BANDWIDTH.md"
bandwidth: all
	@$(BUSTED_ENV) $(LUA) tools/bandwidth.lua $(BANDWIDTH_ARGS)

bench: all build/bench_stream build/bench/handc.so
	./build/bench_stream
	@LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
	  LUA_CPATH="./build/?.so;./build/bench/?.so;;" $(LUA) bench/bench_schema.lua

# the hand-written C peer of the schema benchmark (Lua module "handc")
build/bench/handc.so: bench/handc.c
	@mkdir -p build/bench
	$(CC) $(ALL_CFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) -o $@ bench/handc.c -lm

build/bench_stream: bench/bench_stream.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build
	$(CC) $(WARN) $(FPFLAGS) -Icore -O2 -o $@ $< $(CORE_SRC) $(LIBS)

sanitize: deps
	@mkdir -p build/san
	@for t in $(patsubst core/test/test_%.c,%,$(wildcard core/test/test_*.c)); do \
	  $(CC) $(ALL_CFLAGS) $(SANFLAGS) -o build/san/test_$$t core/test/test_$$t.c $(CORE_SRC) $(LIBS) \
	  && ./build/san/test_$$t || exit 1; done
	@echo "C tests clean under ASan+UBSan"

# libFuzzer targets of the C core (core/test/fuzz_*.c); each has a seed
# generator (the same file built with -DFUZZ_SEEDGEN) that fills
# build/corpus/<target> with valid encodes. tools/fuzz.sh runs them and
# prints exec/s; a crash or a failed check exits non-zero.
FUZZ_CC            ?= clang
FUZZ_SHORT_SECONDS ?= 5
FUZZ_TARGETS        = fuzz_stream fuzz_frame
FUZZ_CFLAGS         = $(WARN) -g -O1 -fno-omit-frame-pointer $(FPFLAGS) -Icore
FUZZ_BINS           = $(FUZZ_TARGETS:%=build/fuzz/%) $(FUZZ_TARGETS:%=build/fuzz/%_seed)

$(FUZZ_TARGETS:%=build/fuzz/%): build/fuzz/%: core/test/%.c core/test/fuzz.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	  -o $@ $< $(CORE_SRC) $(LIBS)

$(FUZZ_TARGETS:%=build/fuzz/%_seed): build/fuzz/%_seed: core/test/%.c core/test/fuzz.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDGEN -fsanitize=address,undefined -fno-sanitize-recover=all \
	  -o $@ $< $(CORE_SRC) $(LIBS)

.PHONY: fuzz-short
fuzz: deps $(FUZZ_BINS)
	@sh tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-short: deps $(FUZZ_BINS)
	@sh tools/fuzz.sh $(FUZZ_SHORT_SECONDS) $(FUZZ_TARGETS)

install: all
	install -d $(DESTDIR)$(INST_LIBDIR)/bitwire $(DESTDIR)$(INST_LUADIR)/bitwire
	install -m 755 build/bitwire/core.so $(DESTDIR)$(INST_LIBDIR)/bitwire/core.so
	install -m 644 lua/bitwire/*.lua $(DESTDIR)$(INST_LUADIR)/bitwire/

uninstall:
	rm -f $(DESTDIR)$(INST_LIBDIR)/bitwire/core.so
	rm -f $(addprefix $(DESTDIR)$(INST_LUADIR)/bitwire/,$(notdir $(wildcard lua/bitwire/*.lua)))

clean:
	rm -rf build
