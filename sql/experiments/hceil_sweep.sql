-- Issue 16's sweeps on Adult at k = 5, h = 0.3: the counterfeit cap under the paper's objective,
-- the suppression limit under each objective, and the three objectives without a cap.
--   anonfusion -f sql/experiments/hceil_sweep.sql      (results: docs/results/hceil.md)
-- lm: mean D(r) over published records, min-max ranges (the report's). lm_intervals: age at its
-- hierarchy interval, every suppressed record counting 1 (as kanon_anonymize and anon_metrics
-- count it). rce: Eq. 4 over the published records (= anon_metrics); rce_with_suppressed adds 1
-- per suppressed record. suppressed comes from output_diagnostics (not for publication).

SELECT COUNT(*) AS records FROM load_dataset('adult');

-- The cap under the paper's objective (objective=rce, no suppression).
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_3', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=3%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_5', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=5%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_7', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=7%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_9', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=9%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_10', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=10%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_15', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=15%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_20', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=20%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_50', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=50%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'cap_none', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, max_counterfeits=none');

-- The suppression limit: the paper's objective with the 10 % cap, and the charged objective
-- without a cap.
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'rce_s0_5', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, suppression=0.5%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'rce_s1', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, suppression=1%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'rce_s2', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, suppression=2%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'rce_s5', 5, 0.3, 'seed=1, diagnostics=true, objective=rce, suppression=5%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'ch_s0', 5, 0.3, 'seed=1, diagnostics=true, objective=charged, max_counterfeits=none, suppression=0%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'ch_s0_5', 5, 0.3, 'seed=1, diagnostics=true, objective=charged, max_counterfeits=none, suppression=0.5%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'ch_s1', 5, 0.3, 'seed=1, diagnostics=true, objective=charged, max_counterfeits=none, suppression=1%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'ch_s2', 5, 0.3, 'seed=1, diagnostics=true, objective=charged, max_counterfeits=none, suppression=2%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'ch_s5', 5, 0.3, 'seed=1, diagnostics=true, objective=charged, max_counterfeits=none, suppression=5%');

-- The objectives without a cap or suppression.
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'fewest_none', 5, 0.3, 'seed=1, diagnostics=true, objective=fewest, max_counterfeits=none');

SELECT * FROM (
  SELECT 1 AS i, 'rce, cap 3%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_3_report r CROSS JOIN cap_3_diagnostics d
  UNION ALL
  SELECT 2 AS i, 'rce, cap 5%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_5_report r CROSS JOIN cap_5_diagnostics d
  UNION ALL
  SELECT 3 AS i, 'rce, cap 7%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_7_report r CROSS JOIN cap_7_diagnostics d
  UNION ALL
  SELECT 4 AS i, 'rce, cap 9%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_9_report r CROSS JOIN cap_9_diagnostics d
  UNION ALL
  SELECT 5 AS i, 'rce, cap 10%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_10_report r CROSS JOIN cap_10_diagnostics d
  UNION ALL
  SELECT 6 AS i, 'rce, cap 15%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_15_report r CROSS JOIN cap_15_diagnostics d
  UNION ALL
  SELECT 7 AS i, 'rce, cap 20%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_20_report r CROSS JOIN cap_20_diagnostics d
  UNION ALL
  SELECT 8 AS i, 'rce, cap 50%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_50_report r CROSS JOIN cap_50_diagnostics d
  UNION ALL
  SELECT 9 AS i, 'rce, cap none' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM cap_none_report r CROSS JOIN cap_none_diagnostics d
  UNION ALL
  SELECT 10 AS i, 'rce, cap 10%, suppression 0.5%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM rce_s0_5_report r CROSS JOIN rce_s0_5_diagnostics d
  UNION ALL
  SELECT 11 AS i, 'rce, cap 10%, suppression 1%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM rce_s1_report r CROSS JOIN rce_s1_diagnostics d
  UNION ALL
  SELECT 12 AS i, 'rce, cap 10%, suppression 2%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM rce_s2_report r CROSS JOIN rce_s2_diagnostics d
  UNION ALL
  SELECT 13 AS i, 'rce, cap 10%, suppression 5%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM rce_s5_report r CROSS JOIN rce_s5_diagnostics d
  UNION ALL
  SELECT 14 AS i, 'charged, no cap, suppression 0%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM ch_s0_report r CROSS JOIN ch_s0_diagnostics d
  UNION ALL
  SELECT 15 AS i, 'charged, no cap, suppression 0.5%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM ch_s0_5_report r CROSS JOIN ch_s0_5_diagnostics d
  UNION ALL
  SELECT 16 AS i, 'charged, no cap, suppression 1%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM ch_s1_report r CROSS JOIN ch_s1_diagnostics d
  UNION ALL
  SELECT 17 AS i, 'charged, no cap, suppression 2%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM ch_s2_report r CROSS JOIN ch_s2_diagnostics d
  UNION ALL
  SELECT 18 AS i, 'charged, no cap, suppression 5%' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM ch_s5_report r CROSS JOIN ch_s5_diagnostics d
  UNION ALL
  SELECT 19 AS i, 'fewest, no cap' AS setting, r.node, r.counterfeit_records AS counterfeits, d.suppressed_records AS suppressed, ROUND(r.lm, 4) AS lm, ROUND(d.lm_intervals_with_suppressed, 4) AS lm_intervals, ROUND(r.rce, 1) AS rce, ROUND(r.rce + d.suppressed_records, 1) AS rce_with_suppressed, r.nodes_evaluated AS evaluated, r.nodes_rejected AS rejected FROM fewest_none_report r CROSS JOIN fewest_none_diagnostics d
) ORDER BY i;
