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
           zlib1g-dev pkg-config clang libclang-rt-14-dev valgrind \
           lua-check cppcheck

CORE_SRC = core/bw_stream.c core/bw_schema.c core/bw_compile.c core/bw_game.c
BIND_SRC = bindings/lbw.c bindings/lbw_path.c bindings/lbw_equal.c \
           bindings/lbw_encode.c bindings/lbw_decode.c bindings/lbw_compile.c \
           bindings/lbw_methods.c bindings/lbw_frame.c bindings/lbw_share.c \
           bindings/lbw_program.c
CORE_HDR = core/bw.h core/bw_schema.h
ALL_CFLAGS = $(WARN) $(FPFLAGS) -Icore $(CFLAGS)
LIBS = -lz -lm

BUSTED_ENV = LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/?.so;;"

.PHONY: all deps check spec test demo bench sanitize fuzz valgrind lint \
        install uninstall clean help bandwidth

all: deps build/bitwire/core.so

help:
	@echo "make [all]    build build/bitwire/core.so"
	@echo "make test     install missing packages, build, run C tests and specs,"
	@echo "              then sanitize, fuzz-short and valgrind (about 5 minutes)"
	@echo "make demo     run the end-to-end example"
	@echo "make bench    C stream and Lua schema benchmarks"
	@echo "make bandwidth  sizes of the game-state encodings (docs/BANDWIDTH.md)"
	@echo "make sanitize C tests and specs under ASan+UBSan"
	@echo "make fuzz     libFuzzer targets, FUZZ_SECONDS each"
	@echo "make fuzz-short  the same for FUZZ_SHORT_SECONDS each (for make test)"
	@echo "make valgrind test_share and the busted suite under memcheck"
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

BIND_HDR = bindings/lbw.h bindings/lbw_schema.h
build/bitwire/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
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

# Counts every C check and busted case into one closing line; the C tests
# and specs under ASan+UBSan (sanitize), a short fuzz run (fuzz-short, about
# 30 s) and the specs under valgrind (about 3 minutes) count as one each.
TEST_STEPS = "$(MAKE) --no-print-directory lint" \
             "$(MAKE) --no-print-directory sanitize" \
             "$(MAKE) --no-print-directory fuzz-short" \
             "$(MAKE) --no-print-directory valgrind"
test: deps all $(C_TESTS)
	@$(LUA) tools/runtests.lua "$(BUSTED)" $(C_TESTS) -- $(TEST_STEPS)

demo: all
	@$(BUSTED_ENV) $(LUA) examples/demo.lua

# luacheck (settings in .luacheckrc) and cppcheck; either's finding fails
lint: deps
	@luacheck --no-color -q lua spec examples tools bench
	@cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	  --std=c99 --inline-suppr -Icore core bindings bench
	@echo "lint: luacheck and cppcheck clean"

# prints the tables of docs/BANDWIDTH.md; BANDWIDTH_ARGS="--write docs/BANDWIDTH.md"
bandwidth: all
	@$(BUSTED_ENV) $(LUA) tools/bandwidth.lua $(BANDWIDTH_ARGS)

bench: all build/bench_stream build/bench/handc.so build/bench/handc_shapes.so
	./build/bench_stream
	@LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
	  LUA_CPATH="./build/?.so;./build/bench/?.so;;" $(LUA) bench/bench_schema.lua
	@LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
	  LUA_CPATH="./build/?.so;./build/bench/?.so;;" $(LUA) bench/bench_shapes.lua

# the hand-written C peer of the schema benchmark (Lua module "handc")
build/bench/handc.so: bench/handc.c
	@mkdir -p build/bench
	$(CC) $(ALL_CFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) -o $@ bench/handc.c -lm

# the hand-written C peers of the shape suite (bench/bench_shapes.lua)
HANDC_SHAPES = bench/handc_nested.c bench/handc_fixed.c bench/handc_optional.c \
               bench/handc_cubes.c
build/bench/handc_shapes.so: $(HANDC_SHAPES) bench/handc_shapes.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/bench
	$(CC) $(ALL_CFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) -o $@ $(HANDC_SHAPES) $(CORE_SRC) $(LIBS)

build/bench_stream: bench/bench_stream.c $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build
	$(CC) $(WARN) $(FPFLAGS) -Icore -O2 -o $@ $< $(CORE_SRC) $(LIBS)

# ASan+UBSan: the C tests, then the specs against an instrumented core.so.
# lua5.4 is not instrumented, so the sanitizer runtime is preloaded (when
# $(CC) has a shared one: gcc's libasan.so); leaks are valgrind's job.
SAN_RT ?= $(shell $(CC) -print-file-name=libasan.so 2>/dev/null)
sanitize: deps
	@mkdir -p build/san/bitwire
	@for t in $(patsubst core/test/test_%.c,%,$(wildcard core/test/test_*.c)); do \
	  $(CC) $(ALL_CFLAGS) $(SANFLAGS) -o build/san/test_$$t core/test/test_$$t.c $(CORE_SRC) $(LIBS) \
	  && ./build/san/test_$$t || exit 1; done
	@echo "C tests clean under ASan+UBSan"
	@$(CC) $(ALL_CFLAGS) $(SANFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) \
	  -o build/san/bitwire/core.so $(CORE_SRC) $(BIND_SRC) $(LIBS)
	@if [ -f "$(SAN_RT)" ]; then \
	  ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(SAN_RT)" \
	    LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/san/?.so;;" \
	    $(BUSTED) -o TAP spec >build/san/spec.tap 2>&1 \
	    || { grep -v '^ok ' build/san/spec.tap | head -n 60; exit 1; }; \
	  echo "specs clean under ASan+UBSan: $$(grep -c '^ok ' build/san/spec.tap) passed"; \
	else echo "specs under ASan+UBSan skipped: $(CC) has no shared libasan"; fi

# test_share and the busted suite under memcheck: any memory error, or any
# definite or indirect leak, fails. lua5.4 and busted close their state on
# exit, so nothing is left to suppress. About 3 minutes; logs in build/.
VALGRIND ?= valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect \
            --show-leak-kinds=definite,indirect
valgrind: deps all build/test_share
	@$(VALGRIND) --log-file=build/valgrind-share.log ./build/test_share >/dev/null \
	  || { cat build/valgrind-share.log; exit 1; }
	@$(BUSTED_ENV) $(VALGRIND) --log-file=build/valgrind-spec.log $(BUSTED) -o TAP spec \
	  >build/valgrind-spec.tap 2>&1 \
	  || { grep -v '^ok ' build/valgrind-spec.tap | head -n 40; \
	       grep -v '^==[0-9]*== *$$' build/valgrind-spec.log | head -n 80; exit 1; }
	@echo "valgrind: test_share and $$(grep -c '^ok ' build/valgrind-spec.tap) specs," \
	  "$$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' build/valgrind-spec.log) errors," \
	  "$$(grep -q 'All heap blocks were freed' build/valgrind-spec.log && echo 'all heap blocks freed' || echo 'no definite or indirect leaks')"

# libFuzzer targets: the C core's (core/test/fuzz_*.c) and the schema
# driver's (bindings/test/fuzz_decode.c, which embeds a lua_State and loads
# bindings/test/fuzz_decode.lua from the checkout root). Each has a seed
# generator (the same file built with -DFUZZ_SEEDGEN) that fills
# build/corpus/<target> with valid encodes. tools/fuzz.sh runs them and
# prints exec/s; a crash or a failed check exits non-zero.
FUZZ_CC            ?= clang
FUZZ_SHORT_SECONDS ?= 8
CORE_FUZZ           = fuzz_stream fuzz_frame
FUZZ_TARGETS        = $(CORE_FUZZ) fuzz_decode fuzz_schema
FUZZ_CFLAGS         = $(WARN) -g -O1 -fno-omit-frame-pointer $(FPFLAGS) -Icore
FUZZ_SAN            = -fno-sanitize-recover=all
FUZZ_BINS           = $(FUZZ_TARGETS:%=build/fuzz/%) $(FUZZ_TARGETS:%=build/fuzz/%_seed)
FUZZ_DEC_SRC        = bindings/test/fuzz_decode.c $(CORE_SRC) $(BIND_SRC)
FUZZ_DEC_DEPS       = $(FUZZ_DEC_SRC) core/test/fuzz.h $(CORE_HDR) $(BIND_HDR)

$(CORE_FUZZ:%=build/fuzz/%): build/fuzz/%: core/test/%.c core/test/fuzz.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $(FUZZ_SAN) \
	  -o $@ $< $(CORE_SRC) $(LIBS)

$(CORE_FUZZ:%=build/fuzz/%_seed): build/fuzz/%_seed: core/test/%.c core/test/fuzz.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDGEN -fsanitize=address,undefined $(FUZZ_SAN) \
	  -o $@ $< $(CORE_SRC) $(LIBS)

# the driver is compiled in, instrumented; liblua is linked (a test program)
build/fuzz/fuzz_decode: $(FUZZ_DEC_DEPS)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibindings -Icore/test $(LUA_CFLAGS) \
	  -fsanitize=fuzzer,address,undefined $(FUZZ_SAN) -o $@ $(FUZZ_DEC_SRC) $(LUA_LIBS) $(LIBS)

build/fuzz/fuzz_decode_seed: $(FUZZ_DEC_DEPS)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibindings -Icore/test $(LUA_CFLAGS) -DFUZZ_SEEDGEN \
	  -fsanitize=address,undefined $(FUZZ_SAN) -o $@ $(FUZZ_DEC_SRC) $(LUA_LIBS) $(LIBS)

# descriptions as input: fuzz_decode's harness with bindings/test/fuzz_schema.lua
FUZZ_SCH_DEF        = -DSCRIPT='"bindings/test/fuzz_schema.lua"'
build/fuzz/fuzz_schema: $(FUZZ_DEC_DEPS) bindings/test/fuzz_schema.lua
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibindings -Icore/test $(LUA_CFLAGS) $(FUZZ_SCH_DEF) \
	  -fsanitize=fuzzer,address,undefined $(FUZZ_SAN) -o $@ $(FUZZ_DEC_SRC) $(LUA_LIBS) $(LIBS)

build/fuzz/fuzz_schema_seed: $(FUZZ_DEC_DEPS) bindings/test/fuzz_schema.lua
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibindings -Icore/test $(LUA_CFLAGS) $(FUZZ_SCH_DEF) -DFUZZ_SEEDGEN \
	  -fsanitize=address,undefined $(FUZZ_SAN) -o $@ $(FUZZ_DEC_SRC) $(LUA_LIBS) $(LIBS)

.PHONY: fuzz-short
fuzz: deps $(FUZZ_BINS)
	@sh tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# for make test: FUZZ_SHORT_SECONDS each, about 32 s for the four
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
