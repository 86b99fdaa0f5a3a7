-- The entropy / mutual-information paper's Adult experiments (Yoo, Shin & Lee 2012, Figs. 4-6)
-- with the PROJECT's attribute set:   anonfusion -f sql/experiments/entropy_adult.sql
-- Adult as ARX ships it: 8 quasi-identifiers (age, sex, race, marital_status, education,
-- native_country, workclass, salary_class), occupation sensitive. The paper's own set (9
-- categorical attributes, relationship instead of age) is entropy_adult_uci.sql.
-- Q-blocks of size k = 3 for every method, on the first n records, n = 5,000 ... 30,162:
--   d      entropy_anonymize, the paper's distance H(X|Y) + I(Y;Z)
--   ce     entropy_anonymize with distance=ce, H(X|Y) alone (the paper's CE)
--   ldiv   entropy_anonymize with distance=ce, entropy_l=3: Q-block clustering whose every
--          block is entropy 3-diverse (the paper's entropy l-diversity baseline, as Q-blocks)
--   tcl    entropy_anonymize with distance=ce, t=0.15: every block 0.15-close (its t-closeness)
--   ldivfd, tclfd  the former full-domain baselines (kanon_anonymize, k = 3, no suppression),
--          kept to check the issue's plain-sum figures.
-- Fig. 4: total information loss, both sums: weighted (sum over Q-blocks of |Q|/N times the
--   block's loss, Eq. 6 with joint probabilities) and the plain sum of the blocks' losses.
-- Fig. 5: Q-blocks with 1, 2 and 3+ distinct occupations. Fig. 6: time_ms of each call.
-- Every call is seeded; the results beside the paper's: docs/results/entropy.md.

-- n = 5000
SELECT table_name, rows FROM load_dataset('adult', 5000, NULL, 'adult_5000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_5000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_5000', 'a_d_5000', 3, 'seed=1, diagnostics=true');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_5000', 'a_ce_5000', 3, 'seed=1, diagnostics=true, distance=ce');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_5000', 'a_ldiv_5000', 3, 'seed=1, diagnostics=true, distance=ce, entropy_l=3');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_5000', 'a_tcl_5000', 3, 'seed=1, diagnostics=true, distance=ce, t=0.15');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_5000', 'a_ldivfd_5000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_5000', 'a_tclfd_5000', 3, 't=0.15');

-- n = 10000
SELECT table_name, rows FROM load_dataset('adult', 10000, NULL, 'adult_10000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_10000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_10000', 'a_d_10000', 3, 'seed=1, diagnostics=true');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_10000', 'a_ce_10000', 3, 'seed=1, diagnostics=true, distance=ce');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_10000', 'a_ldiv_10000', 3, 'seed=1, diagnostics=true, distance=ce, entropy_l=3');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_10000', 'a_tcl_10000', 3, 'seed=1, diagnostics=true, distance=ce, t=0.15');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_10000', 'a_ldivfd_10000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_10000', 'a_tclfd_10000', 3, 't=0.15');

-- n = 15000
SELECT table_name, rows FROM load_dataset('adult', 15000, NULL, 'adult_15000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_15000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_15000', 'a_d_15000', 3, 'seed=1, diagnostics=true');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_15000', 'a_ce_15000', 3, 'seed=1, diagnostics=true, distance=ce');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_15000', 'a_ldiv_15000', 3, 'seed=1, diagnostics=true, distance=ce, entropy_l=3');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_15000', 'a_tcl_15000', 3, 'seed=1, diagnostics=true, distance=ce, t=0.15');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_15000', 'a_ldivfd_15000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_15000', 'a_tclfd_15000', 3, 't=0.15');

-- n = 20000
SELECT table_name, rows FROM load_dataset('adult', 20000, NULL, 'adult_20000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_20000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_20000', 'a_d_20000', 3, 'seed=1, diagnostics=true');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_20000', 'a_ce_20000', 3, 'seed=1, diagnostics=true, distance=ce');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_20000', 'a_ldiv_20000', 3, 'seed=1, diagnostics=true, distance=ce, entropy_l=3');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_20000', 'a_tcl_20000', 3, 'seed=1, diagnostics=true, distance=ce, t=0.15');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_20000', 'a_ldivfd_20000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_20000', 'a_tclfd_20000', 3, 't=0.15');

-- n = 25000
SELECT table_name, rows FROM load_dataset('adult', 25000, NULL, 'adult_25000');
SELECT COUNT(*) AS declared FROM declare_roles('adult_25000', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_25000', 'a_d_25000', 3, 'seed=1, diagnostics=true');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_25000', 'a_ce_25000', 3, 'seed=1, diagnostics=true, distance=ce');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_25000', 'a_ldiv_25000', 3, 'seed=1, diagnostics=true, distance=ce, entropy_l=3');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_25000', 'a_tcl_25000', 3, 'seed=1, diagnostics=true, distance=ce, t=0.15');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_25000', 'a_ldivfd_25000', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_25000', 'a_tclfd_25000', 3, 't=0.15');

-- n = 30162
SELECT table_name, rows FROM load_dataset('adult', 30162, NULL, 'adult_30162');
SELECT COUNT(*) AS declared FROM declare_roles('adult_30162', 'sex=qi, age=qi, race=qi, marital_status=qi, education=qi, native_country=qi, workclass=qi, salary_class=qi, occupation=sensitive');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_30162', 'a_d_30162', 3, 'seed=1, diagnostics=true');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_30162', 'a_ce_30162', 3, 'seed=1, diagnostics=true, distance=ce');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_30162', 'a_ldiv_30162', 3, 'seed=1, diagnostics=true, distance=ce, entropy_l=3');
SELECT COUNT(*) AS released FROM entropy_anonymize('adult_30162', 'a_tcl_30162', 3, 'seed=1, diagnostics=true, distance=ce, t=0.15');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_30162', 'a_ldivfd_30162', 3, 'entropy_l=3');
SELECT COUNT(*) AS released FROM kanon_anonymize('adult_30162', 'a_tclfd_30162', 3, 't=0.15');

-- Figs. 4-6 in one table: weighted = output_diagnostics' total_information_loss (sum over
-- blocks of |Q|/N times the block's loss), plain_sum = block_entropy_sum (the paper's "summing
-- up the loss of all Q-blocks"); anon_metrics' conditional_entropy / entropy_loss for the
-- full-domain ones. Both losses are entropies of the original values inside each block, which
-- the release does not show: they come only with diagnostics=true, not for publication.
SELECT method, n, ROUND(weighted, 4) AS weighted_loss, ROUND(plain_sum, 1) AS plain_sum_loss, q_blocks, l1, l2, l3plus, ROUND(time_ms) AS time_ms FROM (
  SELECT 'd' AS method, 5000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_d_5000_report CROSS JOIN a_d_5000_diagnostics
  UNION ALL
  SELECT 'ce' AS method, 5000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ce_5000_report CROSS JOIN a_ce_5000_diagnostics
  UNION ALL
  SELECT 'ldiv' AS method, 5000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ldiv_5000_report CROSS JOIN a_ldiv_5000_diagnostics
  UNION ALL
  SELECT 'tcl' AS method, 5000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_tcl_5000_report CROSS JOIN a_tcl_5000_diagnostics
  UNION ALL
  SELECT 'ldivfd', 5000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_ldivfd_5000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_5000', 'a_ldivfd_5000')) m
  UNION ALL
  SELECT 'tclfd', 5000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_tclfd_5000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_5000', 'a_tclfd_5000')) m
  UNION ALL
  SELECT 'd' AS method, 10000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_d_10000_report CROSS JOIN a_d_10000_diagnostics
  UNION ALL
  SELECT 'ce' AS method, 10000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ce_10000_report CROSS JOIN a_ce_10000_diagnostics
  UNION ALL
  SELECT 'ldiv' AS method, 10000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ldiv_10000_report CROSS JOIN a_ldiv_10000_diagnostics
  UNION ALL
  SELECT 'tcl' AS method, 10000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_tcl_10000_report CROSS JOIN a_tcl_10000_diagnostics
  UNION ALL
  SELECT 'ldivfd', 10000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_ldivfd_10000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_10000', 'a_ldivfd_10000')) m
  UNION ALL
  SELECT 'tclfd', 10000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_tclfd_10000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_10000', 'a_tclfd_10000')) m
  UNION ALL
  SELECT 'd' AS method, 15000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_d_15000_report CROSS JOIN a_d_15000_diagnostics
  UNION ALL
  SELECT 'ce' AS method, 15000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ce_15000_report CROSS JOIN a_ce_15000_diagnostics
  UNION ALL
  SELECT 'ldiv' AS method, 15000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ldiv_15000_report CROSS JOIN a_ldiv_15000_diagnostics
  UNION ALL
  SELECT 'tcl' AS method, 15000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_tcl_15000_report CROSS JOIN a_tcl_15000_diagnostics
  UNION ALL
  SELECT 'ldivfd', 15000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_ldivfd_15000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_15000', 'a_ldivfd_15000')) m
  UNION ALL
  SELECT 'tclfd', 15000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_tclfd_15000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_15000', 'a_tclfd_15000')) m
  UNION ALL
  SELECT 'd' AS method, 20000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_d_20000_report CROSS JOIN a_d_20000_diagnostics
  UNION ALL
  SELECT 'ce' AS method, 20000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ce_20000_report CROSS JOIN a_ce_20000_diagnostics
  UNION ALL
  SELECT 'ldiv' AS method, 20000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ldiv_20000_report CROSS JOIN a_ldiv_20000_diagnostics
  UNION ALL
  SELECT 'tcl' AS method, 20000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_tcl_20000_report CROSS JOIN a_tcl_20000_diagnostics
  UNION ALL
  SELECT 'ldivfd', 20000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_ldivfd_20000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_20000', 'a_ldivfd_20000')) m
  UNION ALL
  SELECT 'tclfd', 20000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_tclfd_20000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_20000', 'a_tclfd_20000')) m
  UNION ALL
  SELECT 'd' AS method, 25000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_d_25000_report CROSS JOIN a_d_25000_diagnostics
  UNION ALL
  SELECT 'ce' AS method, 25000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ce_25000_report CROSS JOIN a_ce_25000_diagnostics
  UNION ALL
  SELECT 'ldiv' AS method, 25000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ldiv_25000_report CROSS JOIN a_ldiv_25000_diagnostics
  UNION ALL
  SELECT 'tcl' AS method, 25000 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_tcl_25000_report CROSS JOIN a_tcl_25000_diagnostics
  UNION ALL
  SELECT 'ldivfd', 25000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_ldivfd_25000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_25000', 'a_ldivfd_25000')) m
  UNION ALL
  SELECT 'tclfd', 25000, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_tclfd_25000_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_25000', 'a_tclfd_25000')) m
  UNION ALL
  SELECT 'd' AS method, 30162 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_d_30162_report CROSS JOIN a_d_30162_diagnostics
  UNION ALL
  SELECT 'ce' AS method, 30162 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ce_30162_report CROSS JOIN a_ce_30162_diagnostics
  UNION ALL
  SELECT 'ldiv' AS method, 30162 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_ldiv_30162_report CROSS JOIN a_ldiv_30162_diagnostics
  UNION ALL
  SELECT 'tcl' AS method, 30162 AS n, total_information_loss AS weighted, block_entropy_sum AS plain_sum, q_blocks, q_blocks_l1 AS l1, q_blocks_l2 AS l2, q_blocks_l3plus AS l3plus, time_ms FROM a_tcl_30162_report CROSS JOIN a_tcl_30162_diagnostics
  UNION ALL
  SELECT 'ldivfd', 30162, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_ldivfd_30162_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_30162', 'a_ldivfd_30162')) m
  UNION ALL
  SELECT 'tclfd', 30162, m.weighted, m.plain_sum, m.q_blocks, m.l1, m.l2, m.l3plus, r.time_ms FROM a_tclfd_30162_report r CROSS JOIN (
    SELECT MAX(CASE WHEN metric = 'conditional_entropy' THEN value END) AS weighted,
      MAX(CASE WHEN metric = 'entropy_loss' THEN value END) AS plain_sum,
      CAST(MAX(CASE WHEN metric = 'q_blocks' THEN value END) AS BIGINT) AS q_blocks,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l1' THEN value END) AS BIGINT) AS l1,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l2' THEN value END) AS BIGINT) AS l2,
      CAST(MAX(CASE WHEN metric = 'q_blocks_l3plus' THEN value END) AS BIGINT) AS l3plus
    FROM anon_metrics('adult_30162', 'a_tclfd_30162')) m
) ORDER BY method, n;

-- The guarantees of the Q-block baselines at n = 30,162, by verify_release (its own code).
SELECT 'ldiv' AS method, check, holds, detail FROM verify_release('adult_30162', 'a_ldiv_30162', 'k=3, entropy_l=3')
UNION ALL
SELECT 'tcl', check, holds, detail FROM verify_release('adult_30162', 'a_tcl_30162', 'k=3, t=0.15') ORDER BY method, check;

-- Block sizes of the Q-block methods at n = 30,162.
SELECT 'd' AS method, MIN(c) AS smallest, MAX(c) AS largest, ROUND(AVG(c), 2) AS mean FROM (SELECT class_id, COUNT(*) AS c FROM a_d_30162 GROUP BY class_id)
 UNION ALL
SELECT 'ce' AS method, MIN(c) AS smallest, MAX(c) AS largest, ROUND(AVG(c), 2) AS mean FROM (SELECT class_id, COUNT(*) AS c FROM a_ce_30162 GROUP BY class_id)
 UNION ALL
SELECT 'ldiv' AS method, MIN(c) AS smallest, MAX(c) AS largest, ROUND(AVG(c), 2) AS mean FROM (SELECT class_id, COUNT(*) AS c FROM a_ldiv_30162 GROUP BY class_id)
 UNION ALL
SELECT 'tcl' AS method, MIN(c) AS smallest, MAX(c) AS largest, ROUND(AVG(c), 2) AS mean FROM (SELECT class_id, COUNT(*) AS c FROM a_tcl_30162 GROUP BY class_id)
ORDER BY method;
