-- The ArtUC paper's experiments (Poulis et al. 2017, Section 5) on the EHRD-like table:
--   anonfusion -f sql/experiments/artuc_ehrd.sql        (release build; 13 minutes and 1.3 GB peak on a 2-core machine shared with other builds)
-- The paper's defaults: UC1 (Table 6a, adapted to the synthetic data by load_constraints),
-- k = 10, m = 2, delta = 0.04; UC1-UC3 for Table 7 (Setup 1). The sweeps run on the first
-- 52,097 patients (25 %; every ArtUC call ~15-30 s); the |D| series adds 50 % and the full
-- 208,387. Epsilon (suppressed codes) is left unbounded so suppression is measured, not
-- enforced. Seeded. Results and the paper's figures: docs/results/artuc.md.
SELECT table_name, rows FROM load_dataset('ehrd', 52097);
SELECT COUNT(*) AS constraints FROM load_constraints('ehrd', 'UC1');
SELECT COUNT(*) AS constraints FROM load_constraints('ehrd', 'UC2');
SELECT COUNT(*) AS constraints FROM load_constraints('ehrd', 'UC3');

-- The default release (UC1, k = 10, m = 2, delta = 0.04); the sweeps below reuse it.
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_default', 'ehrd_uc1', 10, 2, 0.04, 1000000000, 'seed=1');

-- Figs. 7-8 and 11c: NCP and UL against delta, ArtUC and the Baseline (UC1, k = 10, m = 2).
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_d0_02', 'ehrd_uc1', 10, 2, 0.02, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_d0_06', 'ehrd_uc1', 10, 2, 0.06, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_d0_08', 'ehrd_uc1', 10, 2, 0.08, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'base', 'ehrd_uc1', 10, 2, 1.0, 1000000000, 'variant=baseline');
SELECT method, delta, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, clusters, ROUND(time_ms) AS ms FROM (
  SELECT 'artuc' AS method, 0.02 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_d0_02_report
  UNION ALL
  SELECT 'artuc' AS method, 0.04 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_default_report
  UNION ALL
  SELECT 'artuc' AS method, 0.06 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_d0_06_report
  UNION ALL
  SELECT 'artuc' AS method, 0.08 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_d0_08_report
  UNION ALL
  SELECT 'baseline', NULL, ncp, ul, suppressed_codes, clusters, time_ms FROM base_report
) ORDER BY method, delta;

-- Figs. 9-10 and 12: ARE of the workloads W1-W3 (100 queries each, seed 7) against k (delta = 0.04).
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_k5', 'ehrd_uc1', 5, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_k25', 'ehrd_uc1', 25, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_k50', 'ehrd_uc1', 50, 2, 0.04, 1000000000, 'seed=1');
SELECT k, workload, ROUND(are, 4) AS are FROM (
  SELECT 5 AS k, 'W1' AS workload, are FROM workload_error('ehrd', 'a_k5', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 5 AS k, 'W2' AS workload, are FROM workload_error('ehrd', 'a_k5', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 5 AS k, 'W3' AS workload, are FROM workload_error('ehrd', 'a_k5', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 10 AS k, 'W1' AS workload, are FROM workload_error('ehrd', 'a_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 10 AS k, 'W2' AS workload, are FROM workload_error('ehrd', 'a_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 10 AS k, 'W3' AS workload, are FROM workload_error('ehrd', 'a_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 25 AS k, 'W1' AS workload, are FROM workload_error('ehrd', 'a_k25', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 25 AS k, 'W2' AS workload, are FROM workload_error('ehrd', 'a_k25', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 25 AS k, 'W3' AS workload, are FROM workload_error('ehrd', 'a_k25', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 50 AS k, 'W1' AS workload, are FROM workload_error('ehrd', 'a_k50', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 50 AS k, 'W2' AS workload, are FROM workload_error('ehrd', 'a_k50', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 50 AS k, 'W3' AS workload, are FROM workload_error('ehrd', 'a_k50', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT NULL, 'W1 baseline', are FROM workload_error('ehrd', 'base', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT NULL, 'W2 baseline', are FROM workload_error('ehrd', 'base', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT NULL, 'W3 baseline', are FROM workload_error('ehrd', 'base', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, k;

-- Figs. 11a-b and 14, runtime: UL, ARE (W2, W3), suppressed codes and time against k and m
-- (delta = 0.04). m runs on the first 20,000 patients: at m = 3 a cluster's Q is mostly code
-- triples (a 100-code record holds 161,700), so m = 3 costs far more than m = 2
-- (times: docs/results/artuc.md, Fig. 17 and "Cost").
SELECT table_name, rows FROM load_dataset('ehrd', 20000, NULL, 'ehrd_20000');
SELECT COUNT(*) AS released FROM artuc('ehrd_20000', 'a_m1', 'ehrd_uc1', 10, 1, 0.04, 1000000000, 'seed=1, small_groups=withhold');
SELECT COUNT(*) AS released FROM artuc('ehrd_20000', 'a_m2', 'ehrd_uc1', 10, 2, 0.04, 1000000000, 'seed=1, small_groups=withhold');
SELECT COUNT(*) AS released FROM artuc('ehrd_20000', 'a_m3', 'ehrd_uc1', 10, 3, 0.04, 1000000000, 'seed=1, small_groups=withhold');
SELECT varied, value, ROUND(ul, 4) AS ul, suppressed_codes, ROUND(time_ms) AS ms FROM (
  SELECT 'k' AS varied, 5 AS value, ul, suppressed_codes, time_ms FROM a_k5_report
  UNION ALL
  SELECT 'k' AS varied, 10 AS value, ul, suppressed_codes, time_ms FROM a_default_report
  UNION ALL
  SELECT 'k' AS varied, 25 AS value, ul, suppressed_codes, time_ms FROM a_k25_report
  UNION ALL
  SELECT 'k' AS varied, 50 AS value, ul, suppressed_codes, time_ms FROM a_k50_report
  UNION ALL
  SELECT 'm', 1, ul, suppressed_codes, time_ms FROM a_m1_report
  UNION ALL
  SELECT 'm', 2, ul, suppressed_codes, time_ms FROM a_m2_report
  UNION ALL
  SELECT 'm', 3, ul, suppressed_codes, time_ms FROM a_m3_report
) ORDER BY varied, value;
SELECT m, workload, ROUND(are, 4) AS are FROM (
  SELECT 1 AS m, 'W2' AS workload, are FROM workload_error('ehrd_20000', 'a_m1', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 1 AS m, 'W3' AS workload, are FROM workload_error('ehrd_20000', 'a_m1', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 2 AS m, 'W2' AS workload, are FROM workload_error('ehrd_20000', 'a_m2', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 2 AS m, 'W3' AS workload, are FROM workload_error('ehrd_20000', 'a_m2', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 3 AS m, 'W2' AS workload, are FROM workload_error('ehrd_20000', 'a_m3', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 3 AS m, 'W3' AS workload, are FROM workload_error('ehrd_20000', 'a_m3', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, m;

-- Table 7 / Figs. 15-16 (Setup 1): suppressed codes, UL and its terms UL_gen + UL_sup, and ARE of W1-W3
-- for the constraint sets UC1, UC2, UC3 (k = 10, m = 2, delta = 0.04).
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_uc2', 'ehrd_uc2', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_uc3', 'ehrd_uc3', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT uc, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, ROUND(ul_gen, 4) AS ul_gen, ROUND(ul_sup, 4) AS ul_sup, suppressed_codes, ROUND(time_ms) AS ms FROM (
  SELECT 'UC1' AS uc, ncp, ul, ul_gen, ul_sup, suppressed_codes, time_ms FROM a_default_report
  UNION ALL
  SELECT 'UC2', ncp, ul, ul_gen, ul_sup, suppressed_codes, time_ms FROM a_uc2_report
  UNION ALL
  SELECT 'UC3', ncp, ul, ul_gen, ul_sup, suppressed_codes, time_ms FROM a_uc3_report
) ORDER BY uc;
SELECT uc, workload, ROUND(are, 4) AS are FROM (
  SELECT 'UC1' AS uc, 'W1' AS workload, are FROM workload_error('ehrd', 'a_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC1', 'W2', are FROM workload_error('ehrd', 'a_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC1', 'W3', are FROM workload_error('ehrd', 'a_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC2', 'W1', are FROM workload_error('ehrd', 'a_uc2', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC2', 'W2', are FROM workload_error('ehrd', 'a_uc2', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC2', 'W3', are FROM workload_error('ehrd', 'a_uc2', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC3', 'W1', are FROM workload_error('ehrd', 'a_uc3', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC3', 'W2', are FROM workload_error('ehrd', 'a_uc3', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC3', 'W3', are FROM workload_error('ehrd', 'a_uc3', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, uc;

-- Fig. 11d and runtime against |D| (first n records of the preset; k = 10, m = 2, delta = 0.04).
SELECT table_name, rows FROM load_dataset('ehrd', 104194, NULL, 'ehrd_104194');
SELECT COUNT(*) AS released FROM artuc('ehrd_104194', 'a_n104194', 'ehrd_uc1', 10, 2, 0.04, 1000000000, 'seed=1, small_groups=withhold');
SELECT table_name, rows FROM load_dataset('ehrd', 208387, NULL, 'ehrd_208387');
SELECT COUNT(*) AS released FROM artuc('ehrd_208387', 'a_n208387', 'ehrd_uc1', 10, 2, 0.04, 1000000000, 'seed=1, small_groups=withhold');
SELECT records, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, withheld_records, ROUND(time_ms) AS ms FROM (
  SELECT 52097 AS records, ncp, ul, suppressed_codes, withheld_records, time_ms FROM a_default_report
  UNION ALL
  SELECT 104194 AS records, ncp, ul, suppressed_codes, withheld_records, time_ms FROM a_n104194_report
  UNION ALL
  SELECT 208387 AS records, ncp, ul, suppressed_codes, withheld_records, time_ms FROM a_n208387_report
) ORDER BY records;

-- Every release is (k,k^m)-anonymous and within its constraints (the independent verifiers).
SELECT check, holds, detail FROM verify_release('ehrd', 'a_default', 'km=10:2, constraints=ehrd_uc1');
SELECT check, holds, detail FROM verify_release('ehrd', 'a_k50', 'km=50:2, constraints=ehrd_uc1');

-- Figs. 7-10 with RmR, the paper's competitor (no utility constraints; src/methods/rmr, docs/artuc.md
-- "RmR"): NCP, UL and suppression against delta, beside ArtUC and the Baseline, and Fig. 7c:
-- the additional data utility loss of RmR and of the Baseline over ArtUC at each delta,
-- 1/2 ((NCP_X - NCP_ArtUC) / NCP_ArtUC + (UL_X - UL_ArtUC) / UL_ArtUC) * 100 %.
SELECT COUNT(*) AS released FROM rmr('ehrd', 'r_d0_02', 10, 2, 0.02, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM rmr('ehrd', 'r_default', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM rmr('ehrd', 'r_d0_06', 10, 2, 0.06, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM rmr('ehrd', 'r_d0_08', 10, 2, 0.08, 1000000000, 'seed=1');
SELECT delta, method, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, clusters, ROUND(time_ms) AS ms, ROUND(extra, 1) AS extra_loss_pct FROM (
  SELECT 0.02 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_d0_02_report x, a_d0_02_report a
  UNION ALL
  SELECT 0.02, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_d0_02_report a
  UNION ALL
  SELECT 0.04 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_default_report x, a_default_report a
  UNION ALL
  SELECT 0.04, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_default_report a
  UNION ALL
  SELECT 0.06 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_d0_06_report x, a_d0_06_report a
  UNION ALL
  SELECT 0.06, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_d0_06_report a
  UNION ALL
  SELECT 0.08 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_d0_08_report x, a_d0_08_report a
  UNION ALL
  SELECT 0.08, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_d0_08_report a
) ORDER BY method, delta;

-- Figs. 9-10 and 13: ARE of W1-W3 (100 queries each, seed 7) against delta, ArtUC beside RmR.
SELECT workload, method, delta, ROUND(are, 4) AS are FROM (
  SELECT 0.02 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'a_d0_02', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.02 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'a_d0_02', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.02 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'a_d0_02', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.02 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'r_d0_02', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.02 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'r_d0_02', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.02 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'r_d0_02', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.04 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'a_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.04 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'a_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.04 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'a_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.04 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'r_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.04 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'r_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.04 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'r_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.06 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'a_d0_06', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.06 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'a_d0_06', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.06 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'a_d0_06', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.06 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'r_d0_06', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.06 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'r_d0_06', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.06 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'r_d0_06', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.08 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'a_d0_08', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.08 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'a_d0_08', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.08 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'a_d0_08', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.08 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('ehrd', 'r_d0_08', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.08 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('ehrd', 'r_d0_08', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.08 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('ehrd', 'r_d0_08', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, method, delta;

-- k = 100 (the paper's k series goes to 100): ArtUC at delta = 0.04.
SELECT COUNT(*) AS released FROM artuc('ehrd', 'a_k100', 'ehrd_uc1', 100, 2, 0.04, 1000000000, 'seed=1');
SELECT 100 AS k, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, clusters, ROUND(time_ms) AS ms FROM a_k100_report;
SELECT workload, ROUND(are, 4) AS are FROM (
  SELECT 'W1' AS workload, are FROM workload_error('ehrd', 'a_k100', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'W2', are FROM workload_error('ehrd', 'a_k100', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'W3', are FROM workload_error('ehrd', 'a_k100', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload;

-- RmR's releases are (k,k^m)-anonymous too (the same independent verifier, no constraints).
SELECT check, holds, detail FROM verify_release('ehrd', 'r_d0_02', 'km=10:2');
-- (r_d0_08's 15 clusters of ~3,500 patients hold more than the verifier's 10,000,000 code pairs.)
SELECT check, holds, detail FROM verify_release('ehrd', 'a_k100', 'km=100:2, constraints=ehrd_uc1');
