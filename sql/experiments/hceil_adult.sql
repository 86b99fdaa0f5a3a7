-- The h-ceiling paper's Adult experiments (Kim et al. 2017, Figs. 5-9) as one script:
--   anonfusion -f sql/experiments/hceil_adult.sql
-- Adult: 30,162 rows, the 7 quasi-identifiers of load_dataset('adult'), occupation sensitive.
-- Every call is seeded, so the script prints the same numbers on every run. The results and
-- the paper's numbers side by side: docs/results/hceil.md.

SELECT COUNT(*) AS records FROM load_dataset('adult');

-- k-anonymity baseline (full-domain, LM-optimal, no suppression) at k = 3, 5, 10.
SELECT COUNT(*) AS released FROM kanon_anonymize('adult', 'adult_k3', 3);
SELECT COUNT(*) AS released FROM kanon_anonymize('adult', 'adult_k5', 5);
SELECT COUNT(*) AS released FROM kanon_anonymize('adult', 'adult_k10', 10);

-- Figs. 5 and 7: h = 0.3, k = 3, 5, 10.
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'adult_h30_k3', 3, 0.3, 'seed=1');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'adult_h30_k5', 5, 0.3, 'seed=1');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'adult_h30_k10', 10, 0.3, 'seed=1');
-- Figs. 6 and 8: k = 5, h = 0.25, 0.35 (0.3 is above).
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'adult_h25_k5', 5, 0.25, 'seed=1');
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'adult_h35_k5', 5, 0.35, 'seed=1');
-- No h: the search over every node for the h of least RCE.
SELECT COUNT(*) AS released FROM hceil_anonymize('adult', 'adult_hsearch_k5', 5, NULL, 'seed=1');

-- LM, RCE and counterfeits of every release (Figs. 5-8). LM is measured the same way for both
-- methods: hierarchy intervals for age (anon_metrics on the kanon release, which publishes
-- them; the hceil report's lm_intervals, from its node); lm_minmax is anon_metrics on the hceil
-- release, over the min-max ranges it publishes. RCE: anon_metrics (the catalog weights it,
-- Fig. 4).
SELECT release, k, ROUND(h, 4) AS h, node, counterfeits, ROUND(lm, 4) AS lm, ROUND(lm_minmax, 4) AS lm_minmax, ROUND(rce, 1) AS rce FROM (
  SELECT 'kanon' AS release, 3 AS k, CAST(NULL AS DOUBLE) AS h, r.node, 0 AS counterfeits, m.lm, CAST(NULL AS DOUBLE) AS lm_minmax, m.rce
  FROM adult_k3_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_k3')) m
  UNION ALL
  SELECT 'kanon' AS release, 5 AS k, CAST(NULL AS DOUBLE) AS h, r.node, 0 AS counterfeits, m.lm, CAST(NULL AS DOUBLE) AS lm_minmax, m.rce
  FROM adult_k5_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_k5')) m
  UNION ALL
  SELECT 'kanon' AS release, 10 AS k, CAST(NULL AS DOUBLE) AS h, r.node, 0 AS counterfeits, m.lm, CAST(NULL AS DOUBLE) AS lm_minmax, m.rce
  FROM adult_k10_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_k10')) m
  UNION ALL
  SELECT 'hceil' AS release, 3 AS k, r.h AS h, r.node, r.counterfeit_records AS counterfeits, r.lm_intervals AS lm, m.lm AS lm_minmax, m.rce
  FROM adult_h30_k3_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_h30_k3', 'adult_h30_k3_catalog')) m
  UNION ALL
  SELECT 'hceil' AS release, 5 AS k, r.h AS h, r.node, r.counterfeit_records AS counterfeits, r.lm_intervals AS lm, m.lm AS lm_minmax, m.rce
  FROM adult_h30_k5_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_h30_k5', 'adult_h30_k5_catalog')) m
  UNION ALL
  SELECT 'hceil' AS release, 10 AS k, r.h AS h, r.node, r.counterfeit_records AS counterfeits, r.lm_intervals AS lm, m.lm AS lm_minmax, m.rce
  FROM adult_h30_k10_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_h30_k10', 'adult_h30_k10_catalog')) m
  UNION ALL
  SELECT 'hceil' AS release, 5 AS k, r.h AS h, r.node, r.counterfeit_records AS counterfeits, r.lm_intervals AS lm, m.lm AS lm_minmax, m.rce
  FROM adult_h25_k5_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_h25_k5', 'adult_h25_k5_catalog')) m
  UNION ALL
  SELECT 'hceil' AS release, 5 AS k, r.h AS h, r.node, r.counterfeit_records AS counterfeits, r.lm_intervals AS lm, m.lm AS lm_minmax, m.rce
  FROM adult_h35_k5_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_h35_k5', 'adult_h35_k5_catalog')) m
  UNION ALL
  SELECT 'hceil' AS release, 5 AS k, r.h AS h, r.node, r.counterfeit_records AS counterfeits, r.lm_intervals AS lm, m.lm AS lm_minmax, m.rce
  FROM adult_hsearch_k5_report r CROSS JOIN (SELECT MAX(CASE WHEN metric = 'lm' THEN value END) AS lm,
    MAX(CASE WHEN metric = 'rce' THEN value END) AS rce FROM anon_metrics('adult', 'adult_hsearch_k5', 'adult_hsearch_k5_catalog')) m
) ORDER BY release, k, h;

-- Every h-ceiled release passes the independent verifiers (k counting counterfeits, D(r) <= h,
-- Lemma 1 for the catalog).
SELECT 'adult_h30_k5' AS release, check, holds, detail FROM verify_release('adult', 'adult_h30_k5', 'k=5, h=0.3, catalog', 'adult_h30_k5_catalog');

-- Fig. 9: error of SELECT attr, COUNT(*) FROM adult WHERE occupation = 'Sales' GROUP BY attr,
-- per attribute, at k = 5 (h = 0.3 for the h-ceiled release): ARE over the original's groups
-- (the headline, docs/query_error.md) and over the union of both sides' groups (before issue 23).
SELECT h.attribute, ROUND(h.are, 4) AS hceil_are, ROUND(k.are, 4) AS kanon_are,
       ROUND(h.union_are, 4) AS hceil_union_are, ROUND(k.union_are, 4) AS kanon_union_are FROM (
SELECT 'age' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT age, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
  UNION ALL
SELECT 'sex' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT sex, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY sex', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
  UNION ALL
SELECT 'race' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT race, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY race', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
  UNION ALL
SELECT 'marital_status' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT marital_status, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY marital_status', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
  UNION ALL
SELECT 'education' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT education, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY education', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
  UNION ALL
SELECT 'native_country' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT native_country, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY native_country', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
  UNION ALL
SELECT 'workclass' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT workclass, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY workclass', 'adult', 'adult_h30_k5', 'adult_h30_k5_catalog')
) h JOIN (
SELECT 'age' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT age, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY age', 'adult', 'adult_k5')
  UNION ALL
SELECT 'sex' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT sex, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY sex', 'adult', 'adult_k5')
  UNION ALL
SELECT 'race' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT race, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY race', 'adult', 'adult_k5')
  UNION ALL
SELECT 'marital_status' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT marital_status, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY marital_status', 'adult', 'adult_k5')
  UNION ALL
SELECT 'education' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT education, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY education', 'adult', 'adult_k5')
  UNION ALL
SELECT 'native_country' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT native_country, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY native_country', 'adult', 'adult_k5')
  UNION ALL
SELECT 'workclass' AS attribute, MAX(CASE WHEN group_key = 'SUMMARY' THEN rel_error END) AS are, MAX(CASE WHEN group_key = 'SUMMARY union' THEN rel_error END) AS union_are FROM query_error('SELECT workclass, COUNT(*) FROM adult WHERE occupation = ''Sales'' GROUP BY workclass', 'adult', 'adult_k5')
) k ON h.attribute = k.attribute ORDER BY h.attribute;
