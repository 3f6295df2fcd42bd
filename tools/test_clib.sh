#!/bin/sh
# Install the C library into a temporary PREFIX, then build a C program
# (shared library) and a C++ program (static library) against it with
# pkg-config alone, run both and check what they print.
# usage: sh tools/test_clib.sh MAKE CC CXX
set -e
MAKE=${1:-make}; CC=${2:-cc}; CXX=${3:-c++}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bitwire-clib.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# an install elsewhere first: each install writes bitwire.pc for its PREFIX
$MAKE --no-print-directory -s install-clib PREFIX="$tmp/other" >/dev/null
$MAKE --no-print-directory -s install-clib PREFIX="$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
if [ "$(pkg-config --variable=prefix bitwire)" != "$tmp/prefix" ]; then
  echo "bitwire.pc names $(pkg-config --variable=prefix bitwire), not $tmp/prefix"
  exit 1
fi
cflags=$(pkg-config --cflags bitwire)
libs=$(pkg-config --libs bitwire)
slibs=$(pkg-config --static --libs bitwire)
$CC -std=c99 -Wall -Wextra -Wpedantic -Werror $cflags -o "$tmp/c_prog" \
  core/test/clib_prog.c $libs
$CXX -std=c++11 -Wall -Wextra -Wpedantic -Werror $cflags -o "$tmp/cxx_prog" \
  core/test/clib_prog.cc -Wl,-Bstatic $libs -Wl,-Bdynamic $slibs
# the shared library is found through its soname in the temporary PREFIX
c_out=$(LD_LIBRARY_PATH="$tmp/prefix/lib" "$tmp/c_prog")
cxx_out=$("$tmp/cxx_prog")
want="ad 4e b5 3a 0c | 1 2 5 10 19 42 85 195 | frame 50 37 46 7b 34 12 01 | ok"
fail=0
[ "$c_out" = "$want" ] || { echo "C program printed: $c_out"; fail=1; }
[ "$cxx_out" = "$want" ] || { echo "C++ program printed: $cxx_out"; fail=1; }
soname=$(objdump -p "$tmp/prefix/lib/libbitwire.so.0.1.0" | awk '/SONAME/ {print $2}')
[ "$soname" = libbitwire.so.0 ] || { echo "soname: $soname"; fail=1; }
[ $fail = 0 ] && echo "clib: C and C++ programs built with pkg-config against the installed copy"
# the whole install into a PREFIX with a space, &, | and a quote in it
# (sed and the shell take those apart when unquoted), then uninstall:
# nothing of ours left, files or directories
odd="$tmp/odd p&q|r'\"s"
$MAKE --no-print-directory -s install PREFIX="$odd" >/dev/null
[ "$(PKG_CONFIG_PATH="$odd/lib/pkgconfig" pkg-config --variable=prefix bitwire)" = "$odd" ] \
  || { echo "install: bitwire.pc names another prefix than $odd"; fail=1; }
[ -f "$odd/share/lua/5.4/bitwire/init.lua" ] && [ -x "$odd/bin/bitwire" ] \
  && [ -f "$odd/lib/lua/5.4/bitwire/core.so" ] && [ -f "$odd/include/bitwire/bw.h" ] \
  || { echo "install: files missing under $odd"; fail=1; }
# the installed command finds its own modules, with no LUA_PATH to help
help=$(env -u LUA_PATH -u LUA_CPATH -u LUA_PATH_5_4 -u LUA_CPATH_5_4 \
  "$odd/bin/bitwire" help 2>&1) && echo "$help" | grep -q "^usage: bitwire" \
  || { echo "install: $odd/bin/bitwire help: $help"; fail=1; }
$MAKE --no-print-directory -s uninstall PREFIX="$odd" >/dev/null
left=$(find "$odd" -type f -o -type l -o -name bitwire)
[ -z "$left" ] || { echo "uninstall left: $left"; fail=1; }
[ $fail = 0 ] && echo "install: PREFIX=\"$odd\" installed and uninstalled, nothing left"
exit $fail
