#!/usr/bin/env bash
# risk_report beside ARX 3.9.2's RiskEstimateBuilder on Adult: the raw table and three
# releases (kanon k=5; hceil k=5 h=0.3; kanon k=5 with 2 % suppression), for two population
# sizes (sampling fraction 0.1, where Dankar's rule picks Pitman; 0.5 and 0.9, where it picks the
# smaller of Zayatz and SNB). Writes $OUT/compare.md, the table of docs/results/risk.md.
#
#   ARX_REPO=/path/to/arx bench/risk/compare.sh
#   BIN=target/debug/anonfusion ARX_REPO=... bench/risk/compare.sh   # an anonfusion already built
#
# ARX_REPO is a clone of github.com/arx-deidentifier/arx (tag v3.9.2 is checked out of it).
# Needs java and javac (17), cargo and python3. ARX builds from its source with javac and the
# jars of its lib/ folder; two jars its repository lacks (hadoop-core, pdfbox) are replaced by
# the compile-only stubs in bench/risk/stubs (ARX's PDF certificate is left out).
set -euo pipefail
cd "$(dirname "$0")/../.."
ARX_REPO=${ARX_REPO:?set ARX_REPO to a clone of github.com/arx-deidentifier/arx}
OUT=${OUT:-target/risk-compare}
THRESHOLD=0.2
POPULATIONS="301620 60324 33513"
QIS=age,sex,race,marital_status,education,native_country,workclass
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

# 1. ARX 3.9.2 from source.
if [ ! -f "$OUT/arx/classes/org/deidentifier/arx/risk/RiskEstimateBuilder.class" ]; then
  rm -rf "$OUT/arx" && mkdir -p "$OUT/arx/classes"
  git -C "$ARX_REPO" archive v3.9.2 src/main | tar x -C "$OUT/arx"
  for jar in $(git -C "$ARX_REPO" ls-tree -r --name-only v3.9.2 lib | grep '\.jar$'); do
    mkdir -p "$OUT/arx/$(dirname "$jar")"
    git -C "$ARX_REPO" show "v3.9.2:$jar" > "$OUT/arx/$jar" 2>/dev/null || rm -f "$OUT/arx/$jar"
  done
  (find "$OUT/arx/src/main" -name '*.java' | grep -v '/gui/\|/certificate/'; find bench/risk/stubs -name '*.java') > "$OUT/arx/sources.txt"
  javac -nowarn -encoding UTF-8 -d "$OUT/arx/classes" -cp "$(find "$OUT/arx/lib" -name '*.jar' | tr '\n' ':')" @"$OUT/arx/sources.txt"
fi
CP="$OUT/arx/classes:$OUT/arx/driver:$(find "$OUT/arx/lib" -name '*.jar' | tr '\n' ':')"
mkdir -p "$OUT/arx/driver"
javac -d "$OUT/arx/driver" -cp "$CP" bench/risk/ArxRisk.java

# 2. Our releases and reports.
if [ -z "${BIN:-}" ]; then cargo build --release --bin anonfusion; BIN=target/release/anonfusion; fi
SQL="SELECT * FROM load_dataset('adult');
SELECT COUNT(*) FROM kanon_anonymize('adult', 'kanon_k5', 5);
SELECT COUNT(*) FROM hceil_anonymize('adult', 'hceil_k5', 5, 0.3, 'seed=1');
SELECT COUNT(*) FROM kanon_anonymize('adult', 'kanon_k5_s2', 5, 'suppression=2%');"
for t in adult kanon_k5 hceil_k5 kanon_k5_s2; do
  SQL="$SQL
COPY (SELECT $QIS FROM $t) TO '$OUT/$t.csv';"
  release=$t; [ $t = adult ] && release=
  for p in $POPULATIONS; do
    SQL="$SQL
COPY (SELECT '$t' AS data, $p AS population, measure, value FROM risk_report('adult', '$release', 'threshold=$THRESHOLD, population=$p')) TO '$OUT/ours_${t}_$p.csv';"
  done
done
"$BIN" -c "$SQL" > /dev/null

# 3. ARX on the same tables.
for t in adult kanon_k5 hceil_k5 kanon_k5_s2; do
  java -cp "$CP" ArxRisk "$OUT/$t.csv" "$QIS" "$THRESHOLD" $POPULATIONS | sed "s/^/$t,/" > "$OUT/arx_$t.csv"
done

# 4. Side by side.
python3 bench/risk/compare.py "$OUT" > "$OUT/compare.md"
cat "$OUT/compare.md"
