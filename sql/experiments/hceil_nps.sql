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

-- Q1-Q4 (sql/q1.sql ... q4.sql): ARE over the age groups, k-anonymity vs h-ceiling.
SELECT q.query, ROUND(k.rel_error, 4) AS kanon_are, ROUND(h.rel_error, 4) AS hceil_are FROM (
  SELECT 'Q1' AS query UNION ALL SELECT 'Q2' UNION ALL SELECT 'Q3' UNION ALL SELECT 'Q4') q
JOIN (
  SELECT 'Q1' AS query, rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10') WHERE group_key = 'SUMMARY'
  UNION ALL
  SELECT 'Q2', rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10') WHERE group_key = 'SUMMARY'
  UNION ALL
  SELECT 'Q3', rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10') WHERE group_key = 'SUMMARY'
  UNION ALL
  SELECT 'Q4', rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10') WHERE group_key = 'SUMMARY'
) k ON q.query = k.query
JOIN (
  SELECT 'Q1' AS query, rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog') WHERE group_key = 'SUMMARY'
  UNION ALL
  SELECT 'Q2', rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog') WHERE group_key = 'SUMMARY'
  UNION ALL
  SELECT 'Q3', rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog') WHERE group_key = 'SUMMARY'
  UNION ALL
  SELECT 'Q4', rel_error FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h20', 'nps_h20_catalog') WHERE group_key = 'SUMMARY'
) h ON q.query = h.query ORDER BY q.query;
