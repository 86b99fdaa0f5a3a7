-- The ArtUC paper's experiments (Poulis et al. 2017, Section 5) on the Informs-like table:
--   anonfusion -f sql/experiments/artuc_informs.sql     (release build; ~7 minutes on 2 idle cores, 23 minutes on a loaded machine)
-- 36,553 patients (docs/datasets.md), the paper's constraint sets adapted to the synthetic
-- demographics (load_constraints; UC1, UC4, UC7 as in its Table 7, Setup 2), k = 10, m = 2.
-- delta = 0.04, the paper's default, is infeasible here: the clusters formed already have NCP
-- 0.061 (records are nearly unique over 5 demographics), so 0.1 is the default below. Epsilon
-- (suppressed codes) is left unbounded so suppression is measured, not enforced. Seeded.
-- Results and the paper's figures: docs/results/artuc.md.
SELECT table_name, rows FROM load_dataset('informs');
SELECT COUNT(*) AS constraints FROM load_constraints('informs', 'UC1');
SELECT COUNT(*) AS constraints FROM load_constraints('informs', 'UC4');
SELECT COUNT(*) AS constraints FROM load_constraints('informs', 'UC7');

-- The default release (UC1, k = 10, m = 2, delta = 0.1); the sweeps below reuse it.
SELECT COUNT(*) AS released FROM artuc('informs', 'a_default', 'informs_uc1', 10, 2, 0.1, 1000000000, 'seed=1');

-- Figs. 7-8 and 11c: NCP and UL against delta, ArtUC and the Baseline (UC1, k = 10, m = 2).
SELECT COUNT(*) AS released FROM artuc('informs', 'a_d0_15', 'informs_uc1', 10, 2, 0.15, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'a_d0_2', 'informs_uc1', 10, 2, 0.2, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'a_d0_3', 'informs_uc1', 10, 2, 0.3, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'base', 'informs_uc1', 10, 2, 1.0, 1000000000, 'variant=baseline');
SELECT method, delta, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, clusters, ROUND(time_ms) AS ms FROM (
  SELECT 'artuc' AS method, 0.1 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_default_report
  UNION ALL
  SELECT 'artuc' AS method, 0.15 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_d0_15_report
  UNION ALL
  SELECT 'artuc' AS method, 0.2 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_d0_2_report
  UNION ALL
  SELECT 'artuc' AS method, 0.3 AS delta, ncp, ul, suppressed_codes, clusters, time_ms FROM a_d0_3_report
  UNION ALL
  SELECT 'baseline', NULL, ncp, ul, suppressed_codes, clusters, time_ms FROM base_report
) ORDER BY method, delta;

-- Figs. 9-10 and 12: ARE of the workloads W1-W3 (100 queries each, seed 7) against k (delta = 0.2:
-- at 0.1 the clusters formed for k = 25 already have NCP 0.104, for k = 50 0.146).
SELECT COUNT(*) AS released FROM artuc('informs', 'a_k5', 'informs_uc1', 5, 2, 0.2, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'a_k25', 'informs_uc1', 25, 2, 0.2, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'a_k50', 'informs_uc1', 50, 2, 0.2, 1000000000, 'seed=1');
SELECT k, workload, ROUND(are, 4) AS are FROM (
  SELECT 5 AS k, 'W1' AS workload, are FROM workload_error('informs', 'a_k5', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 5 AS k, 'W2' AS workload, are FROM workload_error('informs', 'a_k5', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 5 AS k, 'W3' AS workload, are FROM workload_error('informs', 'a_k5', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 10 AS k, 'W1' AS workload, are FROM workload_error('informs', 'a_d0_2', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 10 AS k, 'W2' AS workload, are FROM workload_error('informs', 'a_d0_2', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 10 AS k, 'W3' AS workload, are FROM workload_error('informs', 'a_d0_2', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 25 AS k, 'W1' AS workload, are FROM workload_error('informs', 'a_k25', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 25 AS k, 'W2' AS workload, are FROM workload_error('informs', 'a_k25', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 25 AS k, 'W3' AS workload, are FROM workload_error('informs', 'a_k25', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 50 AS k, 'W1' AS workload, are FROM workload_error('informs', 'a_k50', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 50 AS k, 'W2' AS workload, are FROM workload_error('informs', 'a_k50', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 50 AS k, 'W3' AS workload, are FROM workload_error('informs', 'a_k50', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT NULL, 'W1 baseline', are FROM workload_error('informs', 'base', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT NULL, 'W2 baseline', are FROM workload_error('informs', 'base', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT NULL, 'W3 baseline', are FROM workload_error('informs', 'base', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, k;

-- Figs. 11a-b and 14, runtime: UL, ARE (W2, W3), suppressed codes and time against k (delta = 0.2) and m (delta = 0.1).
SELECT COUNT(*) AS released FROM artuc('informs', 'a_m1', 'informs_uc1', 10, 1, 0.1, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'a_m3', 'informs_uc1', 10, 3, 0.1, 1000000000, 'seed=1');
SELECT varied, value, ROUND(ul, 4) AS ul, suppressed_codes, ROUND(time_ms) AS ms FROM (
  SELECT 'k' AS varied, 5 AS value, ul, suppressed_codes, time_ms FROM a_k5_report
  UNION ALL
  SELECT 'k' AS varied, 10 AS value, ul, suppressed_codes, time_ms FROM a_d0_2_report
  UNION ALL
  SELECT 'k' AS varied, 25 AS value, ul, suppressed_codes, time_ms FROM a_k25_report
  UNION ALL
  SELECT 'k' AS varied, 50 AS value, ul, suppressed_codes, time_ms FROM a_k50_report
  UNION ALL
  SELECT 'm', 1, ul, suppressed_codes, time_ms FROM a_m1_report
  UNION ALL
  SELECT 'm', 2, ul, suppressed_codes, time_ms FROM a_default_report
  UNION ALL
  SELECT 'm', 3, ul, suppressed_codes, time_ms FROM a_m3_report
) ORDER BY varied, value;
SELECT m, workload, ROUND(are, 4) AS are FROM (
  SELECT 1 AS m, 'W2' AS workload, are FROM workload_error('informs', 'a_m1', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 1 AS m, 'W3' AS workload, are FROM workload_error('informs', 'a_m1', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 2 AS m, 'W2' AS workload, are FROM workload_error('informs', 'a_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 2 AS m, 'W3' AS workload, are FROM workload_error('informs', 'a_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 3 AS m, 'W2' AS workload, are FROM workload_error('informs', 'a_m3', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 3 AS m, 'W3' AS workload, are FROM workload_error('informs', 'a_m3', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, m;

-- Table 7 / Figs. 15-16 (Setup 2): suppressed codes, UL and its terms UL_gen + UL_sup, and ARE of W1-W3
-- for the constraint sets UC1, UC4, UC7 (k = 10, m = 2, delta = 0.1).
SELECT COUNT(*) AS released FROM artuc('informs', 'a_uc4', 'informs_uc4', 10, 2, 0.1, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('informs', 'a_uc7', 'informs_uc7', 10, 2, 0.1, 1000000000, 'seed=1');
SELECT uc, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, ROUND(ul_gen, 4) AS ul_gen, ROUND(ul_sup, 4) AS ul_sup, suppressed_codes, ROUND(time_ms) AS ms FROM (
  SELECT 'UC1' AS uc, ncp, ul, ul_gen, ul_sup, suppressed_codes, time_ms FROM a_default_report
  UNION ALL
  SELECT 'UC4', ncp, ul, ul_gen, ul_sup, suppressed_codes, time_ms FROM a_uc4_report
  UNION ALL
  SELECT 'UC7', ncp, ul, ul_gen, ul_sup, suppressed_codes, time_ms FROM a_uc7_report
) ORDER BY uc;
SELECT uc, workload, ROUND(are, 4) AS are FROM (
  SELECT 'UC1' AS uc, 'W1' AS workload, are FROM workload_error('informs', 'a_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC1', 'W2', are FROM workload_error('informs', 'a_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC1', 'W3', are FROM workload_error('informs', 'a_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC4', 'W1', are FROM workload_error('informs', 'a_uc4', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC4', 'W2', are FROM workload_error('informs', 'a_uc4', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC4', 'W3', are FROM workload_error('informs', 'a_uc4', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC7', 'W1', are FROM workload_error('informs', 'a_uc7', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC7', 'W2', are FROM workload_error('informs', 'a_uc7', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'UC7', 'W3', are FROM workload_error('informs', 'a_uc7', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, uc;

-- Fig. 11d and runtime against |D| (first n records of the preset; k = 10, m = 2, delta = 0.2: at 0.1 the clusters
-- formed from 9,000 patients already have NCP 0.105).
SELECT table_name, rows FROM load_dataset('informs', 9000, NULL, 'informs_9000');
SELECT COUNT(*) AS released FROM artuc('informs_9000', 'a_n9000', 'informs_uc1', 10, 2, 0.2, 1000000000, 'seed=1, small_groups=withhold');
SELECT table_name, rows FROM load_dataset('informs', 18000, NULL, 'informs_18000');
SELECT COUNT(*) AS released FROM artuc('informs_18000', 'a_n18000', 'informs_uc1', 10, 2, 0.2, 1000000000, 'seed=1, small_groups=withhold');
SELECT records, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, withheld_records, ROUND(time_ms) AS ms FROM (
  SELECT 9000 AS records, ncp, ul, suppressed_codes, withheld_records, time_ms FROM a_n9000_report
  UNION ALL
  SELECT 18000 AS records, ncp, ul, suppressed_codes, withheld_records, time_ms FROM a_n18000_report
  UNION ALL
  SELECT 36553 AS records, ncp, ul, suppressed_codes, withheld_records, time_ms FROM a_d0_2_report
) ORDER BY records;

-- Every release is (k,k^m)-anonymous and within its constraints (the independent verifiers).
SELECT check, holds, detail FROM verify_release('informs', 'a_default', 'km=10:2, constraints=informs_uc1');
SELECT check, holds, detail FROM verify_release('informs', 'a_k50', 'km=50:2, constraints=informs_uc1');

-- Figs. 7-10 with RmR, the paper's competitor (no utility constraints; src/methods/rmr, docs/artuc.md
-- "RmR"): NCP, UL and suppression against delta, beside ArtUC and the Baseline, and Fig. 8c:
-- the additional data utility loss of RmR and of the Baseline over ArtUC at each delta,
-- 1/2 ((NCP_X - NCP_ArtUC) / NCP_ArtUC + (UL_X - UL_ArtUC) / UL_ArtUC) * 100 %.
SELECT COUNT(*) AS released FROM rmr('informs', 'r_default', 10, 2, 0.1, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM rmr('informs', 'r_d0_15', 10, 2, 0.15, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM rmr('informs', 'r_d0_2', 10, 2, 0.2, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM rmr('informs', 'r_d0_3', 10, 2, 0.3, 1000000000, 'seed=1');
SELECT delta, method, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, clusters, ROUND(time_ms) AS ms, ROUND(extra, 1) AS extra_loss_pct FROM (
  SELECT 0.1 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_default_report x, a_default_report a
  UNION ALL
  SELECT 0.1, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_default_report a
  UNION ALL
  SELECT 0.15 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_d0_15_report x, a_d0_15_report a
  UNION ALL
  SELECT 0.15, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_d0_15_report a
  UNION ALL
  SELECT 0.2 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_d0_2_report x, a_d0_2_report a
  UNION ALL
  SELECT 0.2, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_d0_2_report a
  UNION ALL
  SELECT 0.3 AS delta, 'rmr' AS method, x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) AS extra FROM r_d0_3_report x, a_d0_3_report a
  UNION ALL
  SELECT 0.3, 'baseline', x.ncp, x.ul, x.suppressed_codes, x.clusters, x.time_ms, 50 * ((x.ncp - a.ncp) / a.ncp + (x.ul - a.ul) / a.ul) FROM base_report x, a_d0_3_report a
) ORDER BY method, delta;

-- Figs. 9-10 and 13: ARE of W1-W3 (100 queries each, seed 7) against delta, ArtUC beside RmR.
SELECT workload, method, delta, ROUND(are, 4) AS are FROM (
  SELECT 0.1 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('informs', 'a_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.1 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('informs', 'a_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.1 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('informs', 'a_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.1 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('informs', 'r_default', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.1 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('informs', 'r_default', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.1 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('informs', 'r_default', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.15 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('informs', 'a_d0_15', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.15 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('informs', 'a_d0_15', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.15 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('informs', 'a_d0_15', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.15 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('informs', 'r_d0_15', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.15 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('informs', 'r_d0_15', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.15 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('informs', 'r_d0_15', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.2 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('informs', 'a_d0_2', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.2 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('informs', 'a_d0_2', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.2 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('informs', 'a_d0_2', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.2 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('informs', 'r_d0_2', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.2 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('informs', 'r_d0_2', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.2 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('informs', 'r_d0_2', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.3 AS delta, 'artuc' AS method, 'W1' AS workload, are FROM workload_error('informs', 'a_d0_3', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.3 AS delta, 'artuc' AS method, 'W2' AS workload, are FROM workload_error('informs', 'a_d0_3', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.3 AS delta, 'artuc' AS method, 'W3' AS workload, are FROM workload_error('informs', 'a_d0_3', 'W3', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.3 AS delta, 'rmr' AS method, 'W1' AS workload, are FROM workload_error('informs', 'r_d0_3', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.3 AS delta, 'rmr' AS method, 'W2' AS workload, are FROM workload_error('informs', 'r_d0_3', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 0.3 AS delta, 'rmr' AS method, 'W3' AS workload, are FROM workload_error('informs', 'r_d0_3', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload, method, delta;

-- k = 100 (the paper's k series goes to 100): ArtUC at delta = 0.2.
-- One UC1 group has 78 patients: it is withheld (Step 2), its records' codes count as suppressed.
SELECT COUNT(*) AS released FROM artuc('informs', 'a_k100', 'informs_uc1', 100, 2, 0.2, 1000000000, 'seed=1, small_groups=withhold');
SELECT 100 AS k, ROUND(ncp, 4) AS ncp, ROUND(ul, 4) AS ul, suppressed_codes, withheld_records, withheld_codes, clusters, ROUND(time_ms) AS ms FROM a_k100_report;
SELECT workload, ROUND(are, 4) AS are FROM (
  SELECT 'W1' AS workload, are FROM workload_error('informs', 'a_k100', 'W1', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'W2', are FROM workload_error('informs', 'a_k100', 'W2', 100, 7) WHERE query_id IS NULL
  UNION ALL
  SELECT 'W3', are FROM workload_error('informs', 'a_k100', 'W3', 100, 7) WHERE query_id IS NULL
) ORDER BY workload;

-- RmR's releases are (k,k^m)-anonymous too (the same independent verifier, no constraints).
SELECT check, holds, detail FROM verify_release('informs', 'r_default', 'km=10:2');
SELECT check, holds, detail FROM verify_release('informs', 'r_d0_3', 'km=10:2');
SELECT check, holds, detail FROM verify_release('informs', 'a_k100', 'km=100:2, constraints=informs_uc1');
