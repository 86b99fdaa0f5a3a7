#!/usr/bin/env bash
# Issue 36's scaling run on a lent many-core machine, in one call (docs/results/scaling.md,
# "On 16 cores"). The release binaries are built on the two-core machine and travel compressed
# in target/devbin (new.xz: this tree; base.xz, optional: a tree before it; lw.xz, optional:
# this tree's `lattice_wide` bench binary), since the lent machine has no toolchain to count on
# (the carried files are limited to 64 MiB, about two of them):
#   CARGO_TARGET_DIR=... cargo build --release --bin anonfusion; strip; xz > target/devbin/new.xz
#   CARGO_TARGET_DIR=... cargo bench --bench lattice_wide --no-run; strip; xz > target/devbin/lw.xz
#   bench/scaling/device.sh            # writes $OUT/device.md
set -u
D=target/devbin
SMALL=${SMALL:-5000000}   # rows of the scaling runs (a smaller number tries the script)
LARGE=${LARGE:-50000000}  # rows of the memory run
OUT=${OUT:-/tmp}
unpack() { # xz, or Python's lzma where xz is missing
  if command -v xz > /dev/null; then xz -d -T0 -c "$1"; else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi
}
for b in new base lw; do
  [ -x "$D/$b" ] || [ ! -f "$D/$b.xz" ] || { unpack "$D/$b.xz" > "$D/$b" && chmod +x "$D/$b"; }
done
# kanon's and hceil's reports at $SMALL rows on cores $1: time_ms and its passes.
reports() {
  local home
  home=$(mktemp -d)
  HOME=$home ANONFUSION_LEDGER=$home/ledger taskset -c "$1" "$D/new" --format csv -c '\timing' \
    -c "SELECT COUNT(*) FROM load_dataset('nps', $SMALL, 1)" \
    -c "SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10)" -c "SELECT * FROM nps_k_report" \
    -c "SELECT COUNT(*) FROM hceil_anonymize('nps', 'nps_h', 10, 0.2)" -c "SELECT * FROM nps_h_report"
  rm -rf "$home"
}
# Two cores on different physical cores: CPU 0 and the first CPU that is not its hardware-thread
# sibling (on a machine whose CPUs 0 and 1 are one core's two threads, 0-1 is not two cores).
other_core() {
  local sib c
  sib=$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2> /dev/null || echo 0)
  for c in $(seq 1 $(($(nproc) - 1))); do
    [[ ",$sib," == *",$c,"* || "$sib" == "0-$c" ]] || { echo "$c"; return; }
  done
  echo 1
}
TWO="0,$(other_core)"
{
  echo "# $(nproc) cores, $(free -g | awk '/Mem/ {print $2}') GB memory; $(date -u)"
  echo; echo "## topology (lscpu)"
  lscpu | grep -E '^(Model name|Thread|Core|Socket|NUMA node\(s\)|CPU\(s\))' || true
  echo "cpu0's thread siblings: $(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2> /dev/null); two separate cores: $TWO"
  echo; echo "## this tree, $SMALL rows"
  BIN=$D/new ROWS=$SMALL RUNS=2 timeout 200 bench/scaling/run.sh 0 0-1 "$TWO" 0-3 0-7 0-15
  echo; echo "## this tree, $LARGE rows, peak memory"
  BIN=$D/new ROWS=$LARGE RUNS=1 RSS=1 timeout 220 bench/scaling/run.sh 0-15
  for c in 0 "$TWO" 0-15; do
    echo; echo "## reports, $SMALL rows, cores $c"
    export -f reports; D=$D SMALL=$SMALL timeout 45 bash -c "reports $c"
  done
  if [ -x "$D/base" ]; then
    echo; echo "## the tree before (base), $SMALL rows"
    BIN=$D/base ROWS=$SMALL RUNS=1 timeout 70 bench/scaling/run.sh 0 "$TWO" 0-15
  fi
  if [ -x "$D/lw" ]; then
    # The wide lattices (issue 36, point 3): criterion on every core, one printed run on two.
    echo; echo "## lattice_wide (hceil_9qi, ipa_node_9qi), cores 0-15, criterion"
    # One filter a run: the bench builds only the rows its filter names (a prefix, not a regex).
    for m in hceil ipa; do taskset -c 0-15 timeout 90 "$D/lw" --bench "$m" 2>&1 | grep -E 'time:|^lattice_wide'; done
    echo; echo "## lattice_wide, cores $TWO, one printed run each"
    for m in hceil ipa; do taskset -c "$TWO" timeout 40 "$D/lw" --bench "${m}_NOMATCH" 2>&1 | grep -E ' in [0-9]+ ms'; done
  fi
} 2>&1 | tee "$OUT/device.md"
