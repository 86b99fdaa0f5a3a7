#!/usr/bin/env bash
# kanon_anonymize's local recodings (iterative and partitioning) and local suppression beside ARX 3.9.2's local recoding
# (optimizeIterativeFast) on Adult, k = 5 and 10, the same hierarchies (data/adult/). Every
# release, ARX's included, is measured by the same engine code: LM and the two-way-marginal
# score (metric_value), W1 ARE (workload_error), records suppressed, cells at `*`, classes, and
# verify_release('k=N'). Writes $OUT/compare.md, the table of docs/results/local.md.
#
#   bench/local/compare.sh                                # ARX built by bench/risk/compare.sh
#   BIN=target/debug/anonfusion bench/local/compare.sh   # an anonfusion already built
#   ARX_BUILD=/dir/with/classes+lib bench/local/compare.sh
#
# ARX 3.9.2 is the build bench/risk/compare.sh makes from ARX's source (javac, the jars of its
# lib/ folder, the compile-only stubs of bench/risk/stubs), in target/risk-compare/arx unless
# ARX_BUILD names another directory holding its classes/ and lib/.
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-target/local-compare}
SUPPRESSION="20 50 100"
QIS="age sex race marital_status education native_country workclass"
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# 1. ARX 3.9.2, built by bench/risk/compare.sh.
source bench/arx/driver.sh bench/local/ArxLocal.java

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
SELECT COUNT(*) FROM kanon_anonymize('adult', 'it_k$k', $k, 'local=iterative');
SELECT COUNT(*) FROM kanon_anonymize('adult', 'lr_k$k', $k, 'local=recoding');"
  releases="arx_k$k it_k$k lr_k$k"
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
