#!/bin/sh
# tools/fuzz.sh - run libFuzzer targets for a while each, one line per target
# usage: tools/fuzz.sh SECONDS TARGET...  (`make fuzz`, `make fuzz-short`)
#
# For each TARGET: build/fuzz/TARGET_seed writes valid encodes into
# build/corpus/TARGET, then build/fuzz/TARGET runs on that corpus for SECONDS
# and the line printed gives executions per second from libFuzzer's final
# stats. A crash, leak, timeout or failed check prints the input (path, hex,
# how to rerun it) and makes the exit status 1. Extra libFuzzer flags may be
# passed in FUZZ_FLAGS; the log of each run is build/fuzz/TARGET.log.
set -u
secs=${1:?usage: tools/fuzz.sh SECONDS TARGET...}
shift
dir=build/fuzz
failed=0
for t in "$@"; do
  corpus=build/corpus/$t
  art=$dir/artifacts/$t
  log=$dir/$t.log
  mkdir -p "$corpus" "$art"
  if ! "$dir/${t}_seed" "$corpus" >/dev/null; then
    echo "$t: seeding the corpus failed"
    failed=1
    continue
  fi
  # shellcheck disable=SC2086
  "$dir/$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=2048 -artifact_prefix="$art/" ${FUZZ_FLAGS:-} "$corpus" \
    >"$log" 2>&1
  rc=$?
  eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  units=$(find "$corpus" -type f | wc -l | tr -d ' ')
  printf '%-12s %7s exec/s %10s runs in %ss   cov %s, corpus %s\n' \
    "$t" "${eps:-?}" "${runs:-?}" "$secs" "${cov:-?}" "$units"
  if [ "$rc" -ne 0 ]; then
    failed=1
    echo "$t: FAILED (exit $rc); log: $log"
    grep -E 'fuzz check failed|ERROR: |runtime error|SUMMARY: ' "$log" |
      head -n 5
    unit=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -n 1)
    if [ -n "$unit" ] && [ -f "$unit" ]; then
      echo "input: $unit ($(wc -c <"$unit" | tr -d ' ') bytes)"
      echo "hex: $(od -An -v -tx1 "$unit" | tr -d ' \n' | cut -c1-2048)"
      echo "rerun: $dir/$t $unit"
    fi
  fi
done
exit "$failed"
