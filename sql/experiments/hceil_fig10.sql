-- Fig. 10 of the h-ceiling paper (query error against the number of attributes) on Adult, k = 5,
-- h = 0.3, under the reading of sql/experiments/hceil_paper.sql (1 % suppression for both
-- methods; hceil objective=fewest without a cap). ARE over the original's groups of
-- SELECT <first m quasi-identifiers>, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY them,
-- m = 1..6 (m = 7 asks query_error to spread each of kanon's suppressed rows over more than
-- 5,000,000 leaf combinations, its limit).
--   anonfusion -f sql/experiments/hceil_fig10.sql      (results: docs/results/hceil.md)

SELECT COUNT(*) AS records FROM load_dataset('adult');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'p_k5', 5, 0.3, 'objective=fewest, max_counterfeits=none, suppression=1%, seed=1');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult', 'q_k5', 5, 'suppression=1%');

SELECT h.attributes, ROUND(h.are, 4) AS hceil_are, ROUND(k.are, 4) AS kanon_are FROM (
  SELECT 1 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age', 'adult', 'p_k5', 'p_k5_catalog')
  UNION ALL
  SELECT 2 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex', 'adult', 'p_k5', 'p_k5_catalog')
  UNION ALL
  SELECT 3 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race', 'adult', 'p_k5', 'p_k5_catalog')
  UNION ALL
  SELECT 4 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, marital_status, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race, marital_status', 'adult', 'p_k5', 'p_k5_catalog')
  UNION ALL
  SELECT 5 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, marital_status, education, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race, marital_status, education', 'adult', 'p_k5', 'p_k5_catalog')
  UNION ALL
  SELECT 6 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, marital_status, education, native_country, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race, marital_status, education, native_country', 'adult', 'p_k5', 'p_k5_catalog')
) h JOIN (
  SELECT 1 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age', 'adult', 'q_k5')
  UNION ALL
  SELECT 2 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex', 'adult', 'q_k5')
  UNION ALL
  SELECT 3 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race', 'adult', 'q_k5')
  UNION ALL
  SELECT 4 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, marital_status, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race, marital_status', 'adult', 'q_k5')
  UNION ALL
  SELECT 5 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, marital_status, education, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race, marital_status, education', 'adult', 'q_k5')
  UNION ALL
  SELECT 6 AS attributes, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are FROM query_error('SELECT age, sex, race, marital_status, education, native_country, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age, sex, race, marital_status, education, native_country', 'adult', 'q_k5')
) k ON h.attributes = k.attributes ORDER BY h.attributes;
