#!/usr/bin/env bash
# Whole-statement wall times of kanon, hceil and ipa on the NPS-like table, per set of cores
# (taskset), as a markdown table: the "parallel fraction" of issue 36 and docs/results/scaling.md.
#
#   BIN=target/release/anonfusion ROWS=1000000 bench/scaling/run.sh 0 0-1
#   BIN=target/release/anonfusion ROWS=5000000 RUNS=3 bench/scaling/run.sh 0 0-1 0-3 0-7 0-15
#   BIN=target/release/anonfusion ROWS=50000000 RUNS=1 RSS=1 bench/scaling/run.sh 0-15
#   BIN=target/release/anonfusion ROWS=50000000 RUNS=1 RSS=1 METHODS=hceil bench/scaling/run.sh 0-15
#
# BIN: the binary (default target/release/anonfusion). ROWS: rows of load_dataset('nps', ROWS, 1)
# (default 1,000,000). RUNS: rounds (default 3); each round runs every core set once, in the
# order given, so the sets share the machine's load (rounds interleaved); the table shows each
# statement's median. METHODS: the releases made after the load, in order (default
# "kanon hceil ipa"; METHODS=hceil gives one method's own peak memory). RSS=1 adds the
# process's peak resident set (/usr/bin/time -v), the median over the rounds. The arguments are core sets as taskset -c takes
# them (default: 0 0-1).
#
# Every process runs with HOME and the privacy ledger in a fresh temporary directory, so ipa's
# charge neither reads nor grows the user's ledger. Needs bash, taskset, /usr/bin/time and the
# binary: no network, no Python.
set -euo pipefail
BIN=${BIN:-target/release/anonfusion}
ROWS=${ROWS:-1000000}
RUNS=${RUNS:-3}
RSS=${RSS:-0}
METHODS=${METHODS-kanon hceil ipa}
[ $# -gt 0 ] || set -- 0 0-1
[ -x "$BIN" ] || { echo "no binary at $BIN (set BIN)" >&2; exit 1; }
command -v taskset > /dev/null || { echo "taskset not found (util-linux)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found (GNU time)" >&2; exit 1; }

# The statements, in order; their labels name the table's rows.
# The statements, in order, and the labels of the table's rows; an empty label leaves a
# statement out of the table (the budget ipa's charge needs).
LABELS=("load_dataset('nps', $ROWS, 1)")
STATEMENTS=("SELECT COUNT(*) FROM load_dataset('nps', $ROWS, 1)")
for m in $METHODS; do
  case $m in
    kanon) LABELS+=("kanon_anonymize k=10")
      STATEMENTS+=("SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10)") ;;
    hceil) LABELS+=("hceil_anonymize k=10 h=0.2")
      STATEMENTS+=("SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2)") ;;
    ipa) LABELS+=("" "ipa_release ε=1 (declared plan)")
      STATEMENTS+=("SELECT COUNT(*) FROM set_privacy_budget('nps', 1.0)" "SELECT COUNT(*) FROM ipa_release('nps', 'nps_ipa', 1.0)") ;;
    *) echo "unknown method '$m' in METHODS (kanon, hceil, ipa)" >&2; exit 1 ;;
  esac
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# One process on core set $1, round $2: writes $WORK/$1.$2.ms (one statement's milliseconds a
# line) and $WORK/$1.$2.kb (peak RSS in kB).
run_once() {
  local cores=$1 round=$2 home="$WORK/home.$1.$2" args=(-c '\timing')
  mkdir -p "$home"
  for s in "${STATEMENTS[@]}"; do args+=(-c "$s"); done
  if ! HOME="$home" ANONFUSION_LEDGER="$home/ledger" taskset -c "$cores" /usr/bin/time -v -o "$WORK/time.txt" \
    "$BIN" "${args[@]}" > "$WORK/out.txt" 2>&1; then
    echo "the run on cores $cores failed:" >&2
    cat "$WORK/out.txt" "$WORK/time.txt" >&2
    exit 1
  fi
  sed -n 's/^Time: \([0-9.]*\) ms\(, CPU .*\)\{0,1\}$/\1/p' "$WORK/out.txt" > "$WORK/$cores.$round.ms"
  sed -n 's/^[[:space:]]*Maximum resident set size (kbytes): \([0-9]*\)$/\1/p' "$WORK/time.txt" > "$WORK/$cores.$round.kb"
  if [ "$(wc -l < "$WORK/$cores.$round.ms")" -ne "${#STATEMENTS[@]}" ]; then
    echo "expected ${#STATEMENTS[@]} timings on cores $cores, got:" >&2
    cat "$WORK/out.txt" >&2
    exit 1
  fi
  rm -rf "$home"
}

# The median of the numbers on standard input.
median() {
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Line $2 of every round's file $1.*.$3, as its median.
median_of() {
  for r in $(seq 1 "$RUNS"); do sed -n "${2}p" "$WORK/$1.$r.$3"; done | median
}

for r in $(seq 1 "$RUNS"); do
  for cores in "$@"; do
    echo "round $r/$RUNS, cores $cores" >&2
    run_once "$cores" "$r"
  done
done

first=$1
last=${*: -1}
printf '| %s rows, ms (median of %s) |' "$ROWS" "$RUNS"
for cores in "$@"; do printf ' cores %s |' "$cores"; done
[ "$first" != "$last" ] && printf ' speed-up %s → %s |' "$first" "$last"
printf '\n|---|'
for _ in "$@"; do printf -- '---|'; done
[ "$first" != "$last" ] && printf -- '---|'
printf '\n'
for i in "${!STATEMENTS[@]}"; do
  [ -n "${LABELS[$i]}" ] || continue
  printf '| %s |' "${LABELS[$i]}"
  for cores in "$@"; do printf ' %.0f |' "$(median_of "$cores" $((i + 1)) ms)"; done
  if [ "$first" != "$last" ]; then
    a=$(median_of "$first" $((i + 1)) ms)
    b=$(median_of "$last" $((i + 1)) ms)
    printf ' %s× |' "$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
  fi
  printf '\n'
done
if [ "$RSS" = 1 ]; then
  printf '| peak RSS of the process, MB |'
  for cores in "$@"; do printf ' %.0f |' "$(awk -v k="$(median_of "$cores" 1 kb)" 'BEGIN { print k / 1024 }')"; done
  [ "$first" != "$last" ] && printf ' |'
  printf '\n'
fi
