-- The entropy / mutual-information paper's Adult experiments (Yoo, Shin & Lee 2012, Figs. 4-6)
-- as one script:   anonfusion -f sql/experiments/entropy_adult.sql
-- Adult with all of the ARX file's attributes: 8 quasi-identifiers (salary_class included, as the
-- paper's "other attributes"), occupation sensitive, Q-block size k = 3, on the first n records
-- for n = 5,000 ... 30,162. Four methods per n:
--   d    entropy_anonymize, the paper's distance H(X|Y) + I(Y;Z)
--   ce   entropy_anonymize with distance=ce, H(X|Y) alone (the paper's CE)
--   ldiv kanon_anonymize with entropy_l=3 (entropy l-diversity, full-domain, k = 3)
--   tcl  kanon_anonymize with t=0.15 (t-closeness, full-domain, k = 3)
-- Fig. 4: total information loss = sum over the quasi-identifiers of H(X|Q), Eq. 6 over the
--   table with Q the record's Q-block (the report of entropy_anonymize; anon_metrics'
--   conditional_entropy for the full-domain releases, where it is exact).
-- Fig. 5: Q-blocks with 1, 2 and 3+ distinct occupations.
-- Fig. 6: run time of the call (time_ms of each report; a dev build runs slower than release).
-- Every call is seeded; the results beside the paper's: docs/results/entropy.md.

-- n = 5000
SELECT table_name, rows FROM load_dataset('adult', 5000, NULL, 'adult_5000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_5000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_5000', 'd_5000', 3, 'seed=1');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_5000', 'ce_5000', 3, 'seed=1, distance=ce');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_5000', 'ldiv_5000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_5000', 'tcl_5000', 3, 't=0.15');

-- n = 10000
SELECT table_name, rows FROM load_dataset('adult', 10000, NULL, 'adult_10000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_10000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_10000', 'd_10000', 3, 'seed=1');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_10000', 'ce_10000', 3, 'seed=1, distance=ce');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_10000', 'ldiv_10000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_10000', 'tcl_10000', 3, 't=0.15');

-- n = 15000
SELECT table_name, rows FROM load_dataset('adult', 15000, NULL, 'adult_15000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_15000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_15000', 'd_15000', 3, 'seed=1');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_15000', 'ce_15000', 3, 'seed=1, distance=ce');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_15000', 'ldiv_15000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_15000', 'tcl_15000', 3, 't=0.15');

-- n = 20000
SELECT table_name, rows FROM load_dataset('adult', 20000, NULL, 'adult_20000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_20000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_20000', 'd_20000', 3, 'seed=1');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_20000', 'ce_20000', 3, 'seed=1, distance=ce');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_20000', 'ldiv_20000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_20000', 'tcl_20000', 3, 't=0.15');

-- n = 25000
SELECT table_name, rows FROM load_dataset('adult', 25000, NULL, 'adult_25000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_25000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_25000', 'd_25000', 3, 'seed=1');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_25000', 'ce_25000', 3, 'seed=1, distance=ce');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_25000', 'ldiv_25000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_25000', 'tcl_25000', 3, 't=0.15');

-- n = 30162
SELECT table_name, rows FROM load_dataset('adult', 30162, NULL, 'adult_30162');
SELECT COUNT(*) AS declared FROM declare_roles('adult_30162', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_30162', 'd_30162', 3, 'seed=1');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_30162', 'ce_30162', 3, 'seed=1, distance=ce');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_30162', 'ldiv_30162', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_30162', 'tcl_30162', 3, 't=0.15');

-- Figs. 4-6 in one table.
SELECT method, n, ROUND(loss, 4) AS total_information_loss, l1, l2, l3plus, ROUND(time_ms) AS time_ms FROM (
  SELECT 'd' AS method, 5000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM d_5000_report
  UNION ALL
  SELECT 'ce' AS method, 5000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM ce_5000_report
  UNION ALL
  SELECT 'ldiv', 5000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM ldiv_5000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_5000', 'ldiv_5000')) m
  UNION ALL
  SELECT 'tcl', 5000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM tcl_5000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_5000', 'tcl_5000')) m
  UNION ALL
  SELECT 'd' AS method, 10000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM d_10000_report
  UNION ALL
  SELECT 'ce' AS method, 10000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM ce_10000_report
  UNION ALL
  SELECT 'ldiv', 10000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM ldiv_10000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_10000', 'ldiv_10000')) m
  UNION ALL
  SELECT 'tcl', 10000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM tcl_10000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_10000', 'tcl_10000')) m
  UNION ALL
  SELECT 'd' AS method, 15000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM d_15000_report
  UNION ALL
  SELECT 'ce' AS method, 15000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM ce_15000_report
  UNION ALL
  SELECT 'ldiv', 15000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM ldiv_15000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_15000', 'ldiv_15000')) m
  UNION ALL
  SELECT 'tcl', 15000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM tcl_15000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_15000', 'tcl_15000')) m
  UNION ALL
  SELECT 'd' AS method, 20000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM d_20000_report
  UNION ALL
  SELECT 'ce' AS method, 20000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM ce_20000_report
  UNION ALL
  SELECT 'ldiv', 20000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM ldiv_20000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_20000', 'ldiv_20000')) m
  UNION ALL
  SELECT 'tcl', 20000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM tcl_20000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_20000', 'tcl_20000')) m
  UNION ALL
  SELECT 'd' AS method, 25000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM d_25000_report
  UNION ALL
  SELECT 'ce' AS method, 25000 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM ce_25000_report
  UNION ALL
  SELECT 'ldiv', 25000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM ldiv_25000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_25000', 'ldiv_25000')) m
  UNION ALL
  SELECT 'tcl', 25000, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM tcl_25000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_25000', 'tcl_25000')) m
  UNION ALL
  SELECT 'd' AS method, 30162 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM d_30162_report
  UNION ALL
  SELECT 'ce' AS method, 30162 AS n, total_information_loss AS loss, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM ce_30162_report
  UNION ALL
  SELECT 'ldiv', 30162, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM ldiv_30162_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_30162', 'ldiv_30162')) m
  UNION ALL
  SELECT 'tcl', 30162, m.loss, m.l1, m.l2, m.l3plus, r.time_ms FROM tcl_30162_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS loss,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_30162', 'tcl_30162')) m
) ORDER BY method, n;

-- The paper's claims at the full table: loss of d against entropy l-diversity (> 4x lower in
-- the paper) and t-closeness (~3x lower), and l = 1, 2 blocks of d against CE (fewer).
SELECT ROUND(l.loss / d.total_information_loss, 2) AS ldiv_over_d, ROUND(t.loss / d.total_information_loss, 2) AS tcl_over_d,
  d.q_blocks_l1 + d.q_blocks_l2 AS d_l1_l2, ce.q_blocks_l1 + ce.q_blocks_l2 AS ce_l1_l2
FROM d_30162_report d CROSS JOIN ce_30162_report ce
  CROSS JOIN (SELECT value AS loss FROM anon_metrics('adult_30162', 'ldiv_30162') WHERE metric = 'conditional_entropy') l
  CROSS JOIN (SELECT value AS loss FROM anon_metrics('adult_30162', 'tcl_30162') WHERE metric = 'conditional_entropy') t;
