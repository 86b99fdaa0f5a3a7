-- The h-ceiling paper's real-world analysis (Kim et al. 2017, Fig. 11) on the NPS-like table:
--   anonfusion -f sql/experiments/hceil_nps.sql
-- 1,375,900 rows; quasi-identifiers age, sex, length_of_stay, location, surgery; disease
-- sensitive. k-anonymity at k = 10 against the h-ceiled release at k = 10, h = 0.2, then the
-- paper's Q1-Q4 through the query-error harness (the catalog weights the h-ceiled estimates).
-- The plots: see docs/results/hceil.md for the `anonfusion evaluate --plot` commands.

SELECT COUNT(*) AS records FROM load_dataset('nps');
SELECT COUNT(*) AS released FROM kanon_anonymize('nps', 'nps_k10', 10);
SELECT COUNT(*) AS released FROM hceil_anonymize('nps', 'nps_h20', 10, 0.2, 'seed=1');

SELECT node, ROUND(metric_value, 4) AS lm, classes FROM nps_k10_report;
SELECT node, counterfeit_records, catalog_rows, ROUND(lm, 4) AS lm, ROUND(rce, 1) AS rce, classes,
       candidate_nodes, nodes_evaluated, ROUND(time_ms) AS ms FROM nps_h20_report;
SELECT check, holds, detail FROM verify_release('nps', 'nps_h20', 'k=10, h=0.2, catalog', 'nps_h20_catalog');

-- Q1-Q4 (sql/q1.sql ... q4.sql), k-anonymity vs h-ceiling: ARE over the original's age groups
-- (the headline, docs/query_error.md), the ARE over the union of both sides' groups (the
-- figure this page reported before issue 23), the original's groups the estimate lacks, and
-- the spurious groups with the release's estimated records in them.
SELECT release, query,
       ROUND(MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END), 4) AS are,
       ROUND(MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END), 4) AS union_are,
       MAX(CASE WHEN group_key = 'SUMMARY missing' THEN groups END) AS missing,
       MAX(CASE WHEN group_key = 'SUMMARY spurious' THEN groups END) AS spurious,
       ROUND(MAX(CASE WHEN group_key = 'SUMMARY spurious' THEN est_records END), 1) AS spurious_records
FROM (
  SELECT 'kanon' AS release, 'Q1' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10')
  UNION ALL
  SELECT 'kanon' AS release, 'Q2' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10')
  UNION ALL
  SELECT 'kanon' AS release, 'Q3' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10')
  UNION ALL
  SELECT 'kanon' AS release, 'Q4' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10')
  UNION ALL
  SELECT 'hceil' AS release, 'Q1' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog')
  UNION ALL
  SELECT 'hceil' AS release, 'Q2' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog')
  UNION ALL
  SELECT 'hceil' AS release, 'Q3' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog')
  UNION ALL
  SELECT 'hceil' AS release, 'Q4' AS query, group_key, rel_error, groups, est_records FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog')
) GROUP BY release, query ORDER BY release DESC, query;
