-- The floor of issue 16: the fewest counterfeits any node within h = 0.3 needs on Adult, at
-- k = 3, 5, 10 and a suppression limit of 0, 1 and 2 % (the smallest classes below k leave the
-- release first). objective=fewest picks the node with the fewest counterfeits (then least
-- RCE); max_counterfeits=none lifts the cap. Reading: every record's D(r) <= h, numeric
-- attributes over the class's min-max range (Eq. 1), n = 7 quasi-identifiers.
--   anonfusion -f sql/experiments/hceil_floor.sql       (results: docs/results/hceil.md)

SELECT COUNT(*) AS records FROM load_dataset('adult');

SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k3_s0', 3, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=0%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k3_s1', 3, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=1%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k3_s2', 3, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=2%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k5_s0', 5, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=0%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k5_s1', 5, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=1%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k5_s2', 5, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=2%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k10_s0', 10, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=0%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k10_s1', 10, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=1%');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'floor_k10_s2', 10, 0.3, 'seed=1, objective=fewest, max_counterfeits=none, suppression=2%');

SELECT * FROM (
  SELECT 3 AS k, 0 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k3_s0_report
  UNION ALL
  SELECT 3 AS k, 1 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k3_s1_report
  UNION ALL
  SELECT 3 AS k, 2 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k3_s2_report
  UNION ALL
  SELECT 5 AS k, 0 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k5_s0_report
  UNION ALL
  SELECT 5 AS k, 1 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k5_s1_report
  UNION ALL
  SELECT 5 AS k, 2 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k5_s2_report
  UNION ALL
  SELECT 10 AS k, 0 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k10_s0_report
  UNION ALL
  SELECT 10 AS k, 1 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k10_s1_report
  UNION ALL
  SELECT 10 AS k, 2 AS suppression_percent, node, counterfeit_records, nodes_rejected FROM floor_k10_s2_report
) ORDER BY k, suppression_percent;
