#!/usr/bin/env bash
# kanon_anonymize's local recoding and local suppression beside ARX 3.9.2's local recoding
# (optimizeIterativeFast) on Adult, k = 5 and 10, the same hierarchies (data/adult/). Every
# release, ARX's included, is measured by the same engine code: LM and the two-way-marginal
# score (metric_value), W1 ARE (workload_error), records suppressed, cells at `*`, classes, and
# verify_release('k=N'). Writes $OUT/compare.md, the table of docs/results/local.md.
#
#   ARX_REPO=/path/to/arx bench/local/compare.sh
#   BIN=target/debug/anonfusion ARX_REPO=... bench/local/compare.sh   # an anonfusion already built
#   ARX_BUILD=/dir/with/classes+lib ...                              # an ARX 3.9.2 already built
#
# ARX builds from its source as in bench/risk/compare.sh (javac, the jars of its lib/ folder,
# the compile-only stubs of bench/risk/stubs); ARX_BUILD skips that for a build it already made
# ($OUT/arx of bench/risk/compare.sh: classes/ and lib/).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-target/local-compare}
SUPPRESSION="20 50 100"
QIS="age sex race marital_status education native_country workclass"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# 1. ARX 3.9.2 from source (unless given).
ARX=${ARX_BUILD:-$OUT/arx}
if [ ! -f "$ARX/classes/org/deidentifier/arx/ARXResult.class" ]; then
  ARX_REPO=${ARX_REPO:?set ARX_REPO to a clone of github.com/arx-deidentifier/arx, or ARX_BUILD}
  rm -rf "$ARX" && mkdir -p "$ARX/classes"
  git -C "$ARX_REPO" archive v3.9.2 src/main | tar x -C "$ARX"
  for jar in $(git -C "$ARX_REPO" ls-tree -r --name-only v3.9.2 lib | grep '\.jar$'); do
    mkdir -p "$ARX/$(dirname "$jar")"
    git -C "$ARX_REPO" show "v3.9.2:$jar" > "$ARX/$jar" 2>/dev/null || rm -f "$ARX/$jar"
  done
  (find "$ARX/src/main" -name '*.java' | grep -v '/gui/\|/certificate/'; find bench/risk/stubs -name '*.java') > "$ARX/sources.txt"
  javac -nowarn -encoding UTF-8 -d "$ARX/classes" -cp "$(find "$ARX/lib" -name '*.jar' | tr '\n' ':')" @"$ARX/sources.txt"
fi
mkdir -p "$OUT/driver"
CP="$ARX/classes:$OUT/driver:$(find "$ARX/lib" -name '*.jar' | tr '\n' ':')"
javac -d "$OUT/driver" -cp "$CP" bench/local/ArxLocal.java

# 2. ARX's releases, and its own figures for them.
for k in 5 10; do
  java -cp "$CP" ArxLocal data/adult $k 0.01 "$OUT/arx_k$k.csv" > "$OUT/arx_k$k.txt"
done

# 3. Ours, and every release measured by the same SQL. ARX's release keeps the columns the
# engine's releases publish (salary_class, insensitive, is not released), so the two-way-marginal
# score reads the same pairs of attributes for both.
if [ -z "${BIN:-}" ]; then cargo build --release --bin anonfusion; BIN=target/release/anonfusion; fi
cols=""; for q in $QIS; do cols="$cols, $q VARCHAR"; done
star=""; all=""; for q in $QIS; do star="$star + CASE WHEN $q = '*' THEN 1 ELSE 0 END"; all="$all AND $q = '*'"; done
SQL="SELECT COUNT(*) FROM load_dataset('adult');"
rows=""
for k in 5 10; do
  SQL="$SQL
CREATE EXTERNAL TABLE arx_k${k}_csv (sex VARCHAR, age VARCHAR, race VARCHAR, marital_status VARCHAR, education VARCHAR, native_country VARCHAR, workclass VARCHAR, occupation VARCHAR, salary_class VARCHAR, age_lo BIGINT, age_hi BIGINT) STORED AS CSV LOCATION '$OUT/arx_k$k.csv' OPTIONS ('format.has_header' 'true');
CREATE TABLE arx_k$k AS SELECT sex, age, age_lo, age_hi, race, marital_status, education, native_country, workclass, occupation FROM arx_k${k}_csv;
SELECT COUNT(*) FROM kanon_anonymize('adult', 'lr_k$k', $k, 'local=recoding');"
  releases="arx_k$k lr_k$k"
  for s in $SUPPRESSION; do
    SQL="$SQL
SELECT COUNT(*) FROM kanon_anonymize('adult', 'ls${s}_k$k', $k, 'local=suppression, suppression=$s%');"
    releases="$releases ls${s}_k$k"
  done
  for r in $releases; do
    [ -n "$rows" ] && rows="$rows
UNION ALL
"
    rows="${rows}SELECT $k AS k, '$r' AS release, (SELECT COUNT(*) FROM $r WHERE TRUE$all) AS suppressed_records, (SELECT SUM(0$star) FROM $r) AS star_cells, (SELECT COUNT(*) FROM (SELECT DISTINCT ${QIS// /, } FROM $r WHERE NOT (TRUE$all))) AS classes, ROUND(l.value, 4) AS lm, ROUND(m.value, 1) AS two_way_marginal, ROUND(w.are, 4) AS w1_are, v.holds AS k_holds, v.detail AS verify FROM metric_value('adult', '$r', 'lm') l CROSS JOIN metric_value('adult', '$r', 'two_way_marginal') m CROSS JOIN (SELECT are FROM workload_error('adult', '$r', 'W1', 100, 1) WHERE query_id IS NULL) w CROSS JOIN (SELECT holds, detail FROM verify_release('adult', '$r', 'k=$k')) v"
  done
done
# ARX's age bounds against the engine's for every label both releases use (expected: none differ).
SQL="$SQL
COPY (SELECT COUNT(*) AS labels, SUM(CASE WHEN e.lo = a.lo AND e.hi = a.hi THEN 0 ELSE 1 END) AS differ FROM (SELECT age, MIN(age_lo) lo, MAX(age_hi) hi FROM (SELECT age, age_lo, age_hi FROM lr_k5 UNION ALL SELECT age, age_lo, age_hi FROM lr_k10) GROUP BY age) e JOIN (SELECT age, MIN(age_lo) lo, MAX(age_hi) hi FROM (SELECT age, age_lo, age_hi FROM arx_k5 UNION ALL SELECT age, age_lo, age_hi FROM arx_k10) GROUP BY age) a ON e.age = a.age) TO '$OUT/age_bounds.csv' STORED AS CSV OPTIONS ('format.has_header' 'true');
COPY ($rows) TO '$OUT/measures.csv' STORED AS CSV OPTIONS ('format.has_header' 'true');"
echo "$SQL" > "$OUT/compare.sql"
"$BIN" -f "$OUT/compare.sql" > "$OUT/compare.log"

# 4. The table.
python3 bench/local/table.py "$OUT" > "$OUT/compare.md"
cat "$OUT/compare.md"
