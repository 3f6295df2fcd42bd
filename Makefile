# bitwire - build, test, demo, bench, install.  `make help` lists targets.
LUA_VERSION ?= 5.4
LUA         ?= lua$(LUA_VERSION)
LUA_INCDIR  ?=
LUA_CFLAGS  ?= $(if $(LUA_INCDIR),-I$(LUA_INCDIR),$(shell pkg-config --cflags lua$(LUA_VERSION) 2>/dev/null))
CC          ?= cc
CFLAGS      ?= -O2 -g
WARN         = -std=c99 -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes
# compressed floats must round every float32 step exactly as serialize.h does:
# the sources ensure it under any flags (bw_nofuse, make fp-test); this is
# a second guard for code built by this Makefile
FPFLAGS      = -ffp-contract=off
LIBFLAG     ?= -shared
# calls into liblua and between our own functions skip the PLT
MODFLAGS    ?= -fno-plt -fno-semantic-interposition
PREFIX      ?= /usr/local
INST_LIBDIR ?= $(PREFIX)/lib/lua/$(LUA_VERSION)
INST_LUADIR ?= $(PREFIX)/share/lua/$(LUA_VERSION)
BUSTED      ?= $(LUA) $(or $(shell command -v busted 2>/dev/null),busted)
SANFLAGS     = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_SECONDS ?= 6

# Debian packages: `make` needs only BUILD_PKGS (and a C compiler);
# make test / bench / fuzz install theirs on top (see pkg_install below)
BUILD_PKGS = liblua5.4-dev lua5.4 zlib1g-dev pkg-config \
             $(if $(shell command -v $(firstword $(CC)) 2>/dev/null),,gcc)
TEST_PKGS  = lua-busted lua-cjson lua-messagepack clang libclang-rt-14-dev \
             valgrind lua-check cppcheck luarocks lua-socket
BENCH_PKGS = lua-cjson lua-messagepack
FUZZ_PKGS  = clang libclang-rt-14-dev

CORE_SRC = core/bw_stream.c core/bw_schema.c core/bw_compile.c core/bw_game.c \
           core/bw_gen.c core/bw_blob.c core/bw_bloblayout.c core/bw_handle.c
# the compiler's field and option checks, and their internal header
CORE_SRC += core/bw_compilefield.c core/bw_compileopt.c
CORE_INT_HDR = core/bw_compilectx.h
BIND_SRC = bindings/lbw.c bindings/lbw_path.c bindings/lbw_equal.c \
           bindings/lbw_encode.c bindings/lbw_decode.c bindings/lbw_compile.c \
           bindings/lbw_methods.c bindings/lbw_options.c bindings/lbw_frame.c \
           bindings/lbw_share.c bindings/lbw_program.c bindings/lbw_blob.c \
           bindings/lbw_blobread.c bindings/lbw_sandbox.c \
           bindings/lbw_sandboxcopy.c bindings/lbw_readdefs.c
# the decode walk's other concerns (lbw_decode.c keeps the walk)
BIND_SRC += bindings/lbw_claims.c bindings/lbw_flat.c bindings/lbw_decdelta.c \
            bindings/lbw_into.c
# and the encode walk's (lbw_encode.c keeps the full walk)
BIND_SRC += bindings/lbw_encsparse.c bindings/lbw_encdelta.c bindings/lbw_tape.c \
            bindings/lbw_tapeenc.c bindings/lbw_tapedec.c
CORE_HDR = core/bw.h core/bw_schema.h core/bw_gen.h core/bw_blob.h
CORE_HDR += $(CORE_INT_HDR)
# the C library (see "bitwire as a C library" below)
LIB_VERSION  = 0.1.0
LIB_SONAME   = libbitwire.so.0
PUBLIC_HDR   = $(filter-out $(CORE_INT_HDR),$(wildcard core/bw*.h))
INST_CLIBDIR ?= $(PREFIX)/lib
INST_INCDIR  ?= $(PREFIX)/include/bitwire
INST_PCDIR   ?= $(INST_CLIBDIR)/pkgconfig
CLIB         = build/libbitwire.a build/libbitwire.so.$(LIB_VERSION)
CLIB_OBJ     = $(patsubst core/%.c,build/lib/%.o,$(CORE_SRC))
ALL_CFLAGS = $(WARN) $(FPFLAGS) -Icore $(CFLAGS)
LIBS = -lz -lm
# a value as the replacement of sed's s|...|...|: its \, | and & escaped;
# a value as one single-quoted shell word (install paths: spaces, &, |)
sedrepl = $(subst &,\&,$(subst |,\|,$(subst \,\\,$(1))))
shq = '$(subst ','\'',$(1))'
# the CRC and the frame header, apart from the stream primitives
CORE_SRC += core/bw_frame.c
# the UDP game examples and spec/05c-game_loop_spec.lua
TEST_PKGS += lua-socket

BUSTED_ENV = LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/?.so;;"

.PHONY: test-deps tshark-deps bench-deps fuzz-deps rock-test wireshark-test rockspec deps-check
.PHONY: all deps check spec test demo bench sanitize fuzz valgrind lint \
        install uninstall clean help bandwidth

all: deps build/bitwire/core.so $(CLIB)

help:
	@echo "make [all]    build build/bitwire/core.so"
	@echo "make test     install missing packages, build, run C tests and specs,"
	@echo "              then sanitize, fuzz-short and valgrind (time: README)"
	@echo "make demo     run the end-to-end example"
	@echo "make bench    C stream and Lua schema benchmarks"
	@echo "make bandwidth  sizes of the game-state encodings (docs/BANDWIDTH.md)"
	@echo "make sanitize C tests and specs under ASan+UBSan"
	@echo "make fuzz     libFuzzer targets, FUZZ_SECONDS each"
	@echo "make fuzz-short  the same for FUZZ_SHORT_SECONDS each (for make test)"
	@echo "make valgrind test_share, test_sandbox, test_oom and the specs under memcheck"
	@echo "make rock-test  luarocks make into build/rock/tree; require and bitwire help"
	@echo "make rockspec rewrite the rockspec's modules from the Makefile and lua/"
	@echo "make wireshark-test  the generated dissector under tshark"
	@echo "make fp-test  float steps alike with and without FMA contraction"
	@echo "make lint     luacheck and cppcheck"
	@echo "make install  PREFIX=... DESTDIR=... (core.so, lua/bitwire/**, bin/bitwire,"
	@echo "              libbitwire, its headers and bitwire.pc); make uninstall"

# $(call pkg_install,<Debian packages>,<commands>): on Debian installs the
# packages that are missing (sudo when not root); elsewhere installs
# nothing and names each command that is missing.
define pkg_install
@if command -v dpkg >/dev/null 2>&1; then \
  missing=""; for p in $(1); do \
    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
  if [ -n "$$missing" ]; then \
    echo "installing:$$missing"; \
    if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
    $$SUDO apt-get update -qq && \
    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
  fi; \
else \
  for c in $(2); do command -v $$c >/dev/null 2>&1 \
    || echo "missing: $$c (no dpkg here: install it yourself)"; done; \
fi
endef

# what `make` needs: a C compiler, Lua 5.4 with its headers, zlib
deps:
	$(call pkg_install,$(BUILD_PKGS),$(firstword $(CC)) $(LUA) pkg-config)
	@$(MAKE) --no-print-directory deps-check
# a make of its own: LUA_CFLAGS asks pkg-config for the .pc file the install
# above may just have added, and this make expanded its recipe before that
deps-check:
	@printf '#include <lua.h>\n#include <zlib.h>\n' | $(CC) $(LUA_CFLAGS) -E - >/dev/null 2>&1 \
	  || { echo "missing: Lua 5.4 headers (lua.h; set LUA_INCDIR) or zlib (zlib.h)"; exit 1; }

test-deps: deps tshark-deps
	$(call pkg_install,$(TEST_PKGS),busted luacheck cppcheck valgrind clang luarocks)
# tshark on its own, answering debconf's setuid question: where it cannot be
# installed, the rest of make test still runs
tshark-deps:
	@if ! command -v tshark >/dev/null 2>&1 && command -v dpkg >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  echo 'wireshark-common wireshark-common/install-setuid boolean false' \
	    | $$SUDO debconf-set-selections; \
	  echo "installing: tshark"; \
	  { $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
	    $$SUDO apt-get install -y -qq tshark >/dev/null; } \
	    || echo "tshark could not be installed: the Wireshark test will skip"; \
	fi
bench-deps: deps
	$(call pkg_install,$(BENCH_PKGS),)
fuzz-deps: deps
	$(call pkg_install,$(FUZZ_PKGS),clang)

BIND_HDR = bindings/lbw.h bindings/lbw_schema.h bindings/lbw_blob.h bindings/lbw_encvalue.h \
           bindings/lbw_tape.h bindings/lbw_decode.h
build/bitwire/core.so: $(CORE_SRC) $(BIND_SRC) $(CORE_HDR) $(BIND_HDR)
	@mkdir -p build/bitwire
	$(CC) $(ALL_CFLAGS) $(MODFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) -o $@ $(CORE_SRC) $(BIND_SRC) $(LIBS)

# the core compiled once, as the library, for every C test
build/test_%: core/test/test_%.c build/libbitwire.a $(CORE_HDR) core/test/check.h \
              core/test/streamcheck.h
	@mkdir -p build
	$(CC) $(ALL_CFLAGS) -o $@ $< build/libbitwire.a $(LIBS)

C_TESTS = $(patsubst core/test/test_%.c,build/test_%,$(wildcard core/test/test_*.c)) \
          build/test_share build/test_sandbox build/test_oom

# schemas shared across lua_States and threads: links liblua (a test, not
# the module) and requires bitwire from ./lua and ./build at run time
LUA_LIBS ?= $(shell pkg-config --libs lua$(LUA_VERSION) 2>/dev/null)
build/test_share: bindings/test/test_share.c core/test/check.h build/bitwire/core.so
	$(CC) $(WARN) $(CFLAGS) -Icore/test $(LUA_CFLAGS) -pthread -o $@ $< $(LUA_LIBS)

# reloads a definitions file while the host state runs out of memory
build/test_sandbox: bindings/test/test_sandbox.c core/test/check.h build/bitwire/core.so
	$(CC) $(WARN) $(CFLAGS) -Icore/test $(LUA_CFLAGS) -o $@ $< $(LUA_LIBS)

# decodes and encodes stopped by a memory error at every allocation in turn
build/test_oom: bindings/test/test_oom.c bindings/test/oom.lua core/test/check.h build/bitwire/core.so
	$(CC) $(WARN) $(CFLAGS) -Icore/test $(LUA_CFLAGS) -o $@ $< $(LUA_LIBS)

# a blob written from Lua (bindings/test/blobmap.lua), mapped and read from
# C through bitwire.gen.blob's header, under ASan and UBSan
C_TESTS += build/test_blobmap
build/blobmap/blobmap.h: bindings/test/blobmap.lua lua/bitwire/gen/blob.lua build/bitwire/core.so
	@mkdir -p build/blobmap
	@$(BUSTED_ENV) $(LUA) bindings/test/blobmap.lua build/blobmap
build/test_blobmap: bindings/test/test_blobmap.c build/blobmap/blobmap.h core/bw_blob.c core/bw_stream.c $(CORE_HDR) core/test/check.h
	$(CC) $(subst c99,c11,$(WARN)) $(SANFLAGS) -g -Icore -Icore/test -Ibuild/blobmap \
	  -o $@ $< core/bw_blob.c core/bw_stream.c $(LIBS)

check: deps $(C_TESTS)
	@for t in $(C_TESTS); do ./$$t || exit 1; done

spec: test-deps all
	@$(BUSTED_ENV) $(BUSTED) -o utfTerminal spec

# Counts every C check and busted case into one closing line; the C tests
# and specs under ASan+UBSan (sanitize), a short fuzz run (fuzz-short, about
# 3 minutes with its builds) and the specs under valgrind (about 5 minutes,
# started first: "&" runs it alongside the rest, on the second core) count
# as one each.
TEST_STEPS = "$(MAKE) --no-print-directory lint" \
             "$(MAKE) --no-print-directory test-clib" \
             "$(MAKE) --no-print-directory test-gen" \
             "$(MAKE) --no-print-directory example-c-server" \
             "$(MAKE) --no-print-directory rock-test" \
             "$(MAKE) --no-print-directory wireshark-test" \
             "$(MAKE) --no-print-directory sanitize" \
             "$(MAKE) --no-print-directory fuzz-short" \
             "&$(MAKE) --no-print-directory valgrind" \
             "$(MAKE) --no-print-directory -C examples/cutscene" \
             "$(MAKE) --no-print-directory fp-test"
test: test-deps all $(C_TESTS)
	@$(LUA) tools/runtests.lua "$(BUSTED)" $(C_TESTS) -- $(TEST_STEPS)

demo: all
	@$(BUSTED_ENV) $(LUA) examples/demo.lua

# luacheck (settings in .luacheckrc) and cppcheck; either's finding fails
lint: test-deps
	@luacheck --no-color -q lua spec examples tools bench bin/bitwire
	@cppcheck --quiet --error-exitcode=1 --enable=warning,portability \
	  --std=c99 --inline-suppr -Icore core bindings bench
	@echo "lint: luacheck and cppcheck clean"

# prints the tables of docs/BANDWIDTH.md; BANDWIDTH_ARGS="--write docs/BANDWIDTH.md"
bandwidth: all
	@$(BUSTED_ENV) $(LUA) tools/bandwidth.lua $(BANDWIDTH_ARGS)

bench: bench-deps all build/bench_stream build/bench/handc.so build/bench/handc_shapes.so \
       build/bench_gen build/bench/bench_blob
	./build/bench_stream
	./build/bench_gen
	./build/bench/bench_blob
	@$(BUSTED_ENV) $(LUA) bench/bench_blob.lua
	@LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
	  LUA_CPATH="./build/?.so;./build/bench/?.so;;" $(LUA) bench/bench_schema.lua
	@LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" \
	  LUA_CPATH="./build/?.so;./build/bench/?.so;;" $(LUA) bench/bench_shapes.lua
	@$(BUSTED_ENV) $(LUA) bench/bench_delta.lua

# mapped blobs: the generated header of bench/blobgen.lua's records
build/bench/bench_blob.h: bench/blobgen.lua lua/bitwire/gen/blob.lua build/bitwire/core.so
	@mkdir -p build/bench
	@$(BUSTED_ENV) $(LUA) bench/blobgen.lua $@
build/bench/bench_blob: bench/bench_blob.c build/bench/bench_blob.h core/bw_blob.c core/bw_stream.c $(CORE_HDR)
	$(CC) $(subst c99,c11,$(WARN)) -O2 -Icore -Ibuild/bench -o $@ $< core/bw_blob.c core/bw_stream.c $(LIBS)

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
# --cpath: .busted's own cpath (./build) would come first on the path
# otherwise; spec/00-build_spec.lua checks which core.so the run loads.
SAN_RT ?= $(shell $(CC) -print-file-name=libasan.so 2>/dev/null)
SAN_OBJ = $(patsubst core/%.c,build/san/lib/%.o,$(CORE_SRC))
build/san/lib/%.o: core/%.c $(CORE_HDR)
	@mkdir -p build/san/lib
	$(CC) $(ALL_CFLAGS) $(SANFLAGS) -c -o $@ $<
build/san/libbitwire.a: $(SAN_OBJ)
	rm -f $@
	ar rcs $@ $(SAN_OBJ)

sanitize: test-deps build/san/libbitwire.a
	@mkdir -p build/san/bitwire
	@for t in $(patsubst core/test/test_%.c,%,$(wildcard core/test/test_*.c)); do \
	  $(CC) $(ALL_CFLAGS) $(SANFLAGS) -o build/san/test_$$t core/test/test_$$t.c \
	    build/san/libbitwire.a $(LIBS) \
	  && ./build/san/test_$$t || exit 1; done
	@echo "C tests clean under ASan+UBSan"
	@$(CC) $(ALL_CFLAGS) $(SANFLAGS) -fPIC $(LUA_CFLAGS) $(LIBFLAG) \
	  -o build/san/bitwire/core.so $(CORE_SRC) $(BIND_SRC) $(LIBS)
	@if [ -f "$(SAN_RT)" ]; then \
	  ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD="$(SAN_RT)" \
	    BITWIRE_CORE=./build/san/bitwire/core.so \
	    LUA_PATH="./lua/?.lua;./lua/?/init.lua;./?.lua;;" LUA_CPATH="./build/san/?.so;;" \
	    $(BUSTED) --cpath="./build/san/?.so" -o TAP spec >build/san/spec.tap 2>&1 \
	    || { grep -v '^ok ' build/san/spec.tap | head -n 60; exit 1; }; \
	  echo "specs clean under ASan+UBSan: $$(grep -c '^ok ' build/san/spec.tap) passed"; \
	else echo "specs under ASan+UBSan skipped: $(CC) has no shared libasan"; fi

# test_share, test_sandbox, test_oom and the busted suite under memcheck:
# any memory error, or any definite or indirect leak, fails. lua5.4 and
# busted close their state on exit, so nothing is left to suppress. About 4
# minutes; logs in build/.
VALGRIND ?= valgrind --tool=memcheck --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite,indirect \
            --show-leak-kinds=definite,indirect
valgrind: test-deps all build/test_share build/test_sandbox build/test_oom
	@$(VALGRIND) --log-file=build/valgrind-share.log ./build/test_share >/dev/null \
	  || { cat build/valgrind-share.log; exit 1; }
	@$(VALGRIND) --log-file=build/valgrind-oom.log ./build/test_oom >/dev/null \
	  || { cat build/valgrind-oom.log; exit 1; }
	@$(VALGRIND) --log-file=build/valgrind-sandbox.log ./build/test_sandbox >/dev/null \
	  || { cat build/valgrind-sandbox.log; exit 1; }
	@$(BUSTED_ENV) $(VALGRIND) --log-file=build/valgrind-spec.log $(BUSTED) -o TAP spec \
	  >build/valgrind-spec.tap 2>&1 \
	  || { grep -v '^ok ' build/valgrind-spec.tap | head -n 40; \
	       grep -v '^==[0-9]*== *$$' build/valgrind-spec.log | head -n 80; exit 1; }
	@echo "valgrind: test_share, test_sandbox, test_oom and $$(grep -c '^ok ' build/valgrind-spec.tap) specs," \
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
CORE_FUZZ           = fuzz_stream fuzz_frame fuzz_blob
FUZZ_TARGETS        = $(CORE_FUZZ) fuzz_decode fuzz_schema fuzz_unblob fuzz_gen
FUZZ_CFLAGS         = $(WARN) -g -O1 -fno-omit-frame-pointer $(FPFLAGS) -Icore
FUZZ_SAN            = -fno-sanitize-recover=all
FUZZ_BINS           = $(FUZZ_TARGETS:%=build/fuzz/%) $(FUZZ_TARGETS:%=build/fuzz/%_seed)
FUZZ_DEC_SRC        = bindings/test/fuzz_decode.c $(CORE_SRC) $(BIND_SRC)
FUZZ_DEC_DEPS       = $(FUZZ_DEC_SRC) core/test/fuzz.h $(CORE_HDR) $(BIND_HDR)

# a target's other files: FUZZ_PARTS_<target>
FUZZ_PARTS_fuzz_stream = core/test/fuzz_streamread.c core/test/fuzz_streamtrip.c
build/fuzz/fuzz_stream build/fuzz/fuzz_stream_seed: $(FUZZ_PARTS_fuzz_stream) core/test/fuzz_stream.h

$(CORE_FUZZ:%=build/fuzz/%): build/fuzz/%: core/test/%.c core/test/fuzz.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $(FUZZ_SAN) \
	  -o $@ $< $(FUZZ_PARTS_$*) $(CORE_SRC) $(LIBS)

$(CORE_FUZZ:%=build/fuzz/%_seed): build/fuzz/%_seed: core/test/%.c core/test/fuzz.h $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDGEN -fsanitize=address,undefined $(FUZZ_SAN) \
	  -o $@ $< $(FUZZ_PARTS_$*) $(CORE_SRC) $(LIBS)

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

# the generated code of four spec fixtures (kinds, sparse, game, relative)
GEN_FUZZ_DEFS = kinds sparse game relative
GEN_FUZZ_SRC  = $(GEN_FUZZ_DEFS:%=build/gen/fuzz/%.c)
$(GEN_FUZZ_SRC): build/gen/fuzz/%.c: spec/fixtures/gen/%.lua $(wildcard lua/bitwire/gen/*.lua) build/bitwire/core.so
	@mkdir -p build/gen/fuzz
	@$(BUSTED_ENV) $(LUA) -e 'local b = require "bitwire"; local o = b.gen.c(b.schema(dofile("$<")), {name = "$*"}); io.open("build/gen/fuzz/$*.h", "w"):write(o.header); io.open("build/gen/fuzz/$*.c", "w"):write(o.source)'

build/fuzz/fuzz_gen: core/test/fuzz_gen.c core/test/fuzz.h $(GEN_FUZZ_SRC) $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibuild/gen/fuzz -fsanitize=fuzzer,address,undefined $(FUZZ_SAN) \
	  -o $@ $< $(GEN_FUZZ_SRC) $(CORE_SRC) $(LIBS)

build/fuzz/fuzz_gen_seed: core/test/fuzz_gen.c core/test/fuzz.h $(GEN_FUZZ_SRC) $(CORE_SRC) $(CORE_HDR)
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibuild/gen/fuzz -DFUZZ_SEEDGEN -fsanitize=address,undefined $(FUZZ_SAN) \
	  -o $@ $< $(GEN_FUZZ_SRC) $(CORE_SRC) $(LIBS)

# s:unblob and s:blobview on hostile blobs: fuzz_decode's harness running
# bindings/test/fuzz_unblob.lua
FUZZ_UNB_DEF        = -DSCRIPT='"bindings/test/fuzz_unblob.lua"'
build/fuzz/fuzz_unblob: $(FUZZ_DEC_DEPS) bindings/test/fuzz_unblob.lua
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibindings -Icore/test $(LUA_CFLAGS) $(FUZZ_UNB_DEF) \
	  -fsanitize=fuzzer,address,undefined $(FUZZ_SAN) -o $@ $(FUZZ_DEC_SRC) $(LUA_LIBS) $(LIBS)

build/fuzz/fuzz_unblob_seed: $(FUZZ_DEC_DEPS) bindings/test/fuzz_unblob.lua
	@mkdir -p build/fuzz
	$(FUZZ_CC) $(FUZZ_CFLAGS) -Ibindings -Icore/test $(LUA_CFLAGS) $(FUZZ_UNB_DEF) -DFUZZ_SEEDGEN \
	  -fsanitize=address,undefined $(FUZZ_SAN) -o $@ $(FUZZ_DEC_SRC) $(LUA_LIBS) $(LIBS)

.PHONY: fuzz-short
fuzz: fuzz-deps $(FUZZ_BINS)
	@sh tools/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# for make test: FUZZ_SHORT_SECONDS each, about a minute for the seven
fuzz-short: fuzz-deps $(FUZZ_BINS)
	@sh tools/fuzz.sh $(FUZZ_SHORT_SECONDS) $(FUZZ_TARGETS)

# {===== bitwire as a C library: libbitwire.a, libbitwire.so.$(LIB_VERSION),
# the public core headers under include/bitwire/ and bitwire.pc =====

build/lib/%.o: core/%.c $(CORE_HDR)
	@mkdir -p build/lib
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<

build/libbitwire.a: $(CLIB_OBJ)
	rm -f $@
	ar rcs $@ $(CLIB_OBJ)

build/libbitwire.so.$(LIB_VERSION): $(CLIB_OBJ)
	$(CC) -shared -Wl,-soname,$(LIB_SONAME) -o $@ $(CLIB_OBJ) $(LIBS)

# bitwire.pc is made from its template at each install, for that PREFIX
install-clib: $(CLIB) bitwire.pc.in
	@set -e; lib=$(call shq,$(DESTDIR)$(INST_CLIBDIR)); \
	  inc=$(call shq,$(DESTDIR)$(INST_INCDIR)); pc=$(call shq,$(DESTDIR)$(INST_PCDIR)); \
	  install -d "$$lib" "$$inc" "$$pc"; \
	  install -m 644 build/libbitwire.a "$$lib/"; \
	  install -m 755 build/libbitwire.so.$(LIB_VERSION) "$$lib/"; \
	  ln -sf libbitwire.so.$(LIB_VERSION) "$$lib/$(LIB_SONAME)"; \
	  ln -sf $(LIB_SONAME) "$$lib/libbitwire.so"; \
	  install -m 644 $(PUBLIC_HDR) "$$inc/"; \
	  sed -e 's|@PREFIX@|'$(call shq,$(call sedrepl,$(PREFIX)))'|g' \
	    -e 's|@LIBDIR@|'$(call shq,$(call sedrepl,$(INST_CLIBDIR)))'|g' \
	    -e 's|@INCDIR@|'$(call shq,$(call sedrepl,$(INST_INCDIR)))'|g' \
	    -e 's|@VERSION@|$(LIB_VERSION)|g' bitwire.pc.in >"$$pc/bitwire.pc"; \
	  chmod 644 "$$pc/bitwire.pc"; \
	  printf "%s\n" "installed libbitwire in $$lib, its headers in $$inc, bitwire.pc in $$pc"

uninstall-clib:
	@lib=$(call shq,$(DESTDIR)$(INST_CLIBDIR)); inc=$(call shq,$(DESTDIR)$(INST_INCDIR)); \
	  pc=$(call shq,$(DESTDIR)$(INST_PCDIR)); \
	  for f in libbitwire.a libbitwire.so $(LIB_SONAME) libbitwire.so.$(LIB_VERSION); do \
	    rm -f "$$lib/$$f"; done; \
	  for f in $(notdir $(PUBLIC_HDR)); do rm -f "$$inc/$$f"; done; \
	  rm -f "$$pc/bitwire.pc"; rmdir "$$inc" 2>/dev/null || true

# installs into a temporary PREFIX, builds a C and a C++ program against it
# with pkg-config and runs them (tools/test_clib.sh)
test-clib: $(CLIB)
	@sh tools/test_clib.sh "$(MAKE)" "$(CC)" "$(CXX)"

.PHONY: install-clib uninstall-clib test-clib
# }=====

# {===== generated code (bitwire gen c, gen serialize-h): the cross test
# generates, compiles and runs both sides for every description below
GEN_FIXTURES = $(wildcard spec/fixtures/gen/*.lua) spec/fixtures/defs/game_v3.lua \
               bench/message.lua
GEN_CASES   ?= 1000
# and a few of packets over 1 MiB, whose hex lines the harnesses read whole
GEN_LARGE   = $(wildcard spec/fixtures/genlarge/*.lua)
GEN_LARGE_CASES ?= 4
test-gen: all
	@$(BUSTED_ENV) CORE_SRC="$(CORE_SRC)" GEN_SAN="$(SANFLAGS)" \
	  $(LUA) tools/gen_cross.lua build/gen "$(CC)" "$(CXX)" \
	  $(GEN_CASES) $(GEN_FIXTURES)
	@$(BUSTED_ENV) CORE_SRC="$(CORE_SRC)" GEN_SAN="$(SANFLAGS)" \
	  $(LUA) tools/gen_cross.lua build/genlarge "$(CC)" "$(CXX)" \
	  $(GEN_LARGE_CASES) $(GEN_LARGE)
.PHONY: test-gen

# examples/c_server: a C server from code generated from the definitions a
# Lua client prototyped with; the client starts it and talks to it over UDP
build/examples/c_server/game.c: examples/c_server/defs.lua $(wildcard lua/bitwire/gen/*.lua) build/bitwire/core.so
	@mkdir -p build/examples/c_server
	@$(BUSTED_ENV) $(LUA) -e 'os.exit(require("bitwire.cli.gen").run({"c", "examples/c_server/defs.lua", "-o", "build/examples/c_server", "--name", "game"}))' >/dev/null

build/examples/c_server/server: examples/c_server/server.c build/examples/c_server/game.c $(CLIB)
	$(CC) $(WARN) $(FPFLAGS) -Icore -Ibuild/examples/c_server -O2 -o $@ \
	  examples/c_server/server.c build/examples/c_server/game.c build/libbitwire.a $(LIBS)

example-c-server: all build/examples/c_server/server
	@$(BUSTED_ENV) $(LUA) examples/c_server/client.lua build/examples/c_server/server
.PHONY: example-c-server

# the snapshot of bench/message.lua through generated C (make bench)
build/bench/gen/snapshot.c: bench/message.lua $(wildcard lua/bitwire/gen/*.lua) build/bitwire/core.so
	@mkdir -p build/bench/gen
	@$(BUSTED_ENV) $(LUA) -e 'local b = require "bitwire"; local o = b.gen.c(b.schema(dofile("bench/message.lua").description), {name = "snapshot"}); io.open("build/bench/gen/snapshot.h", "w"):write(o.header); io.open("build/bench/gen/snapshot.c", "w"):write(o.source)'

build/bench_gen: bench/bench_gen.c build/bench/gen/snapshot.c $(CLIB)
	$(CC) $(WARN) $(FPFLAGS) -Icore -Ibuild/bench/gen -O2 -o $@ bench/bench_gen.c \
	  build/bench/gen/snapshot.c build/libbitwire.a $(LIBS)
# }=====

INST_BINDIR ?= $(PREFIX)/bin
LUA_FILES = $(shell cd lua && find bitwire -name '*.lua' | sort)
# our directories, the deepest first: uninstall removes those left empty
LUA_DIRS  = $(shell cd lua && find bitwire -type d | sort -r)
install: all install-clib
	@set -e; mod=$(call shq,$(DESTDIR)$(INST_LIBDIR)/bitwire); \
	  luadir=$(call shq,$(DESTDIR)$(INST_LUADIR)); bin=$(call shq,$(DESTDIR)$(INST_BINDIR)); \
	  install -d "$$mod" "$$bin"; \
	  install -m 755 build/bitwire/core.so "$$mod/core.so"; \
	  for f in $(LUA_FILES); do \
	    install -d "$$luadir/$$(dirname $$f)"; install -m 644 lua/$$f "$$luadir/$$f"; done; \
	  install -m 755 bin/bitwire "$$bin/bitwire"; \
	  printf "%s\n" "installed bitwire.core in $$mod, the Lua modules in $$luadir/bitwire, bitwire in $$bin"

# what install wrote, and the directories of ours it leaves empty
uninstall: uninstall-clib
	@mod=$(call shq,$(DESTDIR)$(INST_LIBDIR)/bitwire); \
	  luadir=$(call shq,$(DESTDIR)$(INST_LUADIR)); bin=$(call shq,$(DESTDIR)$(INST_BINDIR)); \
	  rm -f "$$mod/core.so" "$$bin/bitwire"; \
	  for f in $(LUA_FILES); do rm -f "$$luadir/$$f"; done; \
	  for d in $(LUA_DIRS); do rmdir "$$luadir/$$d" 2>/dev/null || true; done; \
	  rmdir "$$mod" 2>/dev/null || true

# The generated Wireshark dissector under tshark (tools/test_wireshark.lua);
# without tshark the test says it skipped.
wireshark-test: tshark-deps all
	@$(BUSTED_ENV) $(LUA) tools/test_wireshark.lua

# float steps that round alike with -ffp-contract=fast and an FMA target:
# no fused multiply-add in the core, binding, generated C and C example, and
# the same values as with -ffp-contract=off (tools/test_fpcontract.sh)
fp-test: all
	@$(BUSTED_ENV) LUA=$(LUA) sh tools/test_fpcontract.sh build/fp "$(CC)" \
	  "$(LUA_CFLAGS)" $(CORE_SRC) -- $(BIND_SRC)
.PHONY: fp-test

# the rockspec against the Makefile's sources, then `luarocks make` of a
# copy of the sources into a temporary tree: require bitwire from there and
# run its `bitwire help`
ROCK_DIR = build/rock
rockspec:
	@$(LUA) tools/check_rockspec.lua "$(CORE_SRC) $(BIND_SRC)" --write

rock-test: test-deps
	@$(LUA) tools/check_rockspec.lua "$(CORE_SRC) $(BIND_SRC)"
	@rm -rf $(ROCK_DIR) && mkdir -p $(ROCK_DIR)/src
	@cp -r core bindings lua bin rockspecs $(ROCK_DIR)/src/
	@cd $(ROCK_DIR)/src && luarocks --lua-version $(LUA_VERSION) make \
	  --tree ../tree rockspecs/bitwire-scm-1.rockspec >../make.log 2>&1 \
	  || { cat ../make.log; exit 1; }
	@cd /tmp && eval "$$(luarocks --lua-version $(LUA_VERSION) --tree $(CURDIR)/$(ROCK_DIR)/tree path)" \
	  && $(LUA) -e 'local bw = require "bitwire"; assert(package.searchpath("bitwire.core", package.cpath):find("$(ROCK_DIR)/tree", 1, true)); assert(bw.schema { T = { { "x", "bool" } } }:encode("T", { x = true }) == "\1")' \
	  && $(CURDIR)/$(ROCK_DIR)/tree/bin/bitwire help | grep -q '^  dissect ' \
	  && echo "rock-test: luarocks make into $(ROCK_DIR)/tree, require and bitwire help work"

clean:
	rm -rf build
