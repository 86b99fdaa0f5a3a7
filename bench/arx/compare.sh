#!/usr/bin/env bash
# kanon_anonymize's whole SQL statement beside ARX 3.9.2's anonymize() on the eight Adult
# configurations of docs/kanon.md (7 and 9 quasi-identifiers, Adult and Adult x10, k = 5 and 10,
# 2 % suppression, distinct 3-diversity, t-closeness), in interleaved rounds: each round runs
# one ARX JVM (10 warm-ups per configuration, then timed runs: thread CPU of anonymize()) and
# then one anonfusion session (warm-ups, then timed statements: process CPU of the statement,
# every thread, and its wall time, from `\timing`). Checks both pick the same optimum node.
# Writes $OUT/compare.md, the table of docs/kanon.md.
#
#   bench/arx/compare.sh                                   # ARX built by bench/risk/compare.sh
#   ARX_BUILD=/dir/with/classes+lib BIN=target/release/anonfusion bench/arx/compare.sh
#   ROUNDS=3 RUNS=3 OURS_WARMUPS=3 bench/arx/compare.sh    # the defaults
#
# ARX 3.9.2 is the build bench/risk/compare.sh makes from ARX's source (javac, the jars of its
# lib/ folder, the compile-only stubs of bench/risk/stubs), in target/risk-compare/arx unless
# ARX_BUILD names another directory holding its classes/ and lib/. Adult x10 is written once by
# bench/arx/adult_x10.py and read by both sides; Adult and the hierarchies are data/adult/.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-target/arx-compare}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-3}
ARX_WARMUPS=10
OURS_WARMUPS=${OURS_WARMUPS:-3}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# 1. ARX 3.9.2, built by bench/risk/compare.sh, and our driver.
source bench/arx/driver.sh bench/arx/ArxKanon.java

# 2. One Adult x10 for both sides; our session's statements.
python3 bench/arx/adult_x10.py data/adult/adult.csv "$OUT/adult_x10.csv"
python3 bench/arx/compare.py sql "$OUT/adult_x10.csv" "$OURS_WARMUPS" "$RUNS" > "$OUT/ours.sql"
if [ -z "${BIN:-}" ]; then cargo build --release --bin anonfusion; BIN=target/release/anonfusion; fi

# 3. Interleaved rounds.
rm -f "$OUT"/arx_*.csv "$OUT"/ours_*.log
for round in $(seq 1 "$ROUNDS"); do
  java -cp "$CP" ArxKanon data/adult "$OUT/adult_x10.csv" "$ARX_WARMUPS" "$RUNS" > "$OUT/arx_$round.csv"
  "$BIN" --format csv -f "$OUT/ours.sql" > "$OUT/ours_$round.log"
done

# 4. The table.
python3 bench/arx/compare.py table "$OUT" > "$OUT/compare.md"
cat "$OUT/compare.md"
