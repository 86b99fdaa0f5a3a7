-- The IPA paper's evaluation (Jeon et al., "Results and discussion": Figs. 6-10, Tables 9-12)
-- on the NPS-like table:   anonfusion -f sql/experiments/ipa_nps.sql
-- 1,375,900 rows; dimension attributes age, sex, length_of_stay, location, surgery; disease
-- informative. epsilon = 1 split 0.1/0.3/0.3/0.3 as in the paper, 10 runs (seeds 1-10);
-- k-anonymity at k = 10; the generalized DP histogram (the paper's reference [10]) at the
-- k-anonymous node, epsilon = 1, 10 runs. Results beside the paper's: docs/results/ipa.md.
-- Seeded runs are reproducible and therefore predictable: real releases take no seed.
-- guarantee=paper: the paper's algorithm, NOT differentially private (docs/ipa.md); its
-- losses come from the diagnostics tables (diagnostics=true, not for publication).

-- Seeded DP calls are test fixtures, not private releases (their noise can be recomputed
-- from the seed): the session has to allow them, and every label of theirs says so.
SET anonfusion.seeded_dp = true;
SELECT COUNT(*) AS records FROM load_dataset('nps');
CREATE EXTERNAL TABLE published STORED AS CSV LOCATION 'data/nps/published_query_results.csv'
  OPTIONS ('format.has_header' 'true');
SELECT COUNT(*) AS released FROM kanon_anonymize('nps', 'nps_k10', 10);
SELECT node FROM nps_k10_report;

-- IPA, epsilon = 1, ten runs.
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r1', 1.0, 'guarantee=paper, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r2', 1.0, 'guarantee=paper, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r3', 1.0, 'guarantee=paper, diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r4', 1.0, 'guarantee=paper, diagnostics=true, seed=4');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r5', 1.0, 'guarantee=paper, diagnostics=true, seed=5');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r6', 1.0, 'guarantee=paper, diagnostics=true, seed=6');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r7', 1.0, 'guarantee=paper, diagnostics=true, seed=7');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r8', 1.0, 'guarantee=paper, diagnostics=true, seed=8');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r9', 1.0, 'guarantee=paper, diagnostics=true, seed=9');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_r10', 1.0, 'guarantee=paper, diagnostics=true, seed=10');

-- The DP histogram at the k-anonymous node [2, 0, 5, 0, 0], epsilon = 1 (a node fixed in advance costs no budget).
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r1', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r2', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r3', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r4', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=4');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r5', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=5');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r6', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=6');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r7', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=7');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r8', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=8');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r9', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=9');
SELECT COUNT(*) AS released FROM dp_histogram('nps', 'hist_r10', 1.0, '2,0,5,0,0', 'diagnostics=true, seed=10');

-- IPA at other budgets (Fig. 7), three runs each.
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e0_1_r1', 0.1, 'guarantee=paper, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e0_1_r2', 0.1, 'guarantee=paper, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e0_1_r3', 0.1, 'guarantee=paper, diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e0_5_r1', 0.5, 'guarantee=paper, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e0_5_r2', 0.5, 'guarantee=paper, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e0_5_r3', 0.5, 'guarantee=paper, diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e2_0_r1', 2.0, 'guarantee=paper, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e2_0_r2', 2.0, 'guarantee=paper, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'ipa_e2_0_r3', 2.0, 'guarantee=paper, diagnostics=true, seed=3');

-- Fig. 6: information loss IL = NCP + EMD + Rate (paper: IPA 0.28, k-anonymity 0.43, histogram 0.69).
-- k-anonymity perturbs and inserts nothing, so its IL is its NCP (anon_metrics' ipa_ncp).
SELECT method, ROUND(il, 4) AS il, ROUND(il_min, 4) AS il_min, ROUND(il_max, 4) AS il_max,
  ROUND(ncp, 4) AS ncp, ROUND(emd, 4) AS emd, ROUND(rate, 4) AS rate FROM (
  SELECT 'ipa' AS method, AVG(il) AS il, MIN(il) AS il_min, MAX(il) AS il_max, AVG(ncp) AS ncp, AVG(emd) AS emd, AVG(rate) AS rate
    FROM (SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r1_diagnostics d, ipa_r1_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r2_diagnostics d, ipa_r2_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r3_diagnostics d, ipa_r3_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r4_diagnostics d, ipa_r4_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r5_diagnostics d, ipa_r5_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r6_diagnostics d, ipa_r6_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r7_diagnostics d, ipa_r7_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r8_diagnostics d, ipa_r8_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r9_diagnostics d, ipa_r9_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r10_diagnostics d, ipa_r10_report r)
  UNION ALL
  SELECT 'kanon', value AS il, value AS il_min, value AS il_max, value AS ncp, 0.0 AS emd, 0.0 AS rate FROM anon_metrics('nps', 'nps_k10') WHERE metric = 'ipa_ncp'
  UNION ALL
  SELECT 'histogram', AVG(il), MIN(il), MAX(il), AVG(ncp), AVG(emd), AVG(rate) FROM (SELECT il, ncp, emd, rate FROM hist_r1_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r2_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r3_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r4_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r5_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r6_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r7_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r8_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r9_diagnostics UNION ALL SELECT il, ncp, emd, rate FROM hist_r10_diagnostics)
) ORDER BY il;

-- The nodes IPA chose in the ten runs, and the lattice it chose from (Eq. 12 is nearly uniform at
-- epsilon_candidates = 0.3: weights differ by at most e^0.15).
SELECT node, COUNT(*) AS runs, ROUND(AVG(il), 4) AS il FROM (SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r1_diagnostics d, ipa_r1_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r2_diagnostics d, ipa_r2_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r3_diagnostics d, ipa_r3_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r4_diagnostics d, ipa_r4_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r5_diagnostics d, ipa_r5_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r6_diagnostics d, ipa_r6_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r7_diagnostics d, ipa_r7_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r8_diagnostics d, ipa_r8_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r9_diagnostics d, ipa_r9_report r UNION ALL SELECT d.il, d.ncp, d.emd, d.rate, r.node FROM ipa_r10_diagnostics d, ipa_r10_report r) GROUP BY node ORDER BY runs DESC, node;
SELECT COUNT(*) AS nodes, ROUND(MIN(il), 4) AS best_il, ROUND(AVG(il), 4) AS mean_il, ROUND(MAX(il), 4) AS worst_il,
  ROUND(MAX(probability) / MIN(probability), 4) AS max_weight_ratio FROM ipa_r1_diagnostics_nodes;

-- Fig. 7: IL as epsilon varies (runs 1-3 at each budget).
SELECT epsilon, ROUND(il, 4) AS il FROM (
  SELECT 0.1 AS epsilon, AVG(il) AS il FROM (SELECT il FROM ipa_e0_1_r1_diagnostics UNION ALL SELECT il FROM ipa_e0_1_r2_diagnostics UNION ALL SELECT il FROM ipa_e0_1_r3_diagnostics)
  UNION ALL
  SELECT 0.5 AS epsilon, AVG(il) AS il FROM (SELECT il FROM ipa_e0_5_r1_diagnostics UNION ALL SELECT il FROM ipa_e0_5_r2_diagnostics UNION ALL SELECT il FROM ipa_e0_5_r3_diagnostics)
  UNION ALL
  SELECT 2.0 AS epsilon, AVG(il) AS il FROM (SELECT il FROM ipa_e2_0_r1_diagnostics UNION ALL SELECT il FROM ipa_e2_0_r2_diagnostics UNION ALL SELECT il FROM ipa_e2_0_r3_diagnostics)
  UNION ALL
  SELECT 1.0, AVG(il) FROM (SELECT il FROM ipa_r1_diagnostics UNION ALL SELECT il FROM ipa_r2_diagnostics UNION ALL SELECT il FROM ipa_r3_diagnostics)
) ORDER BY epsilon;

-- Figs. 8-10: NCP, EMD and Rate of every lattice node by node height (run 1, epsilon = 1), the
-- candidates Eq. 12 chooses among.
SELECT height, COUNT(*) AS nodes, ROUND(AVG(ncp), 4) AS ncp, ROUND(AVG(emd), 4) AS emd, ROUND(AVG(rate), 4) AS rate,
  ROUND(AVG(il), 4) AS il FROM ipa_r1_diagnostics_nodes GROUP BY height ORDER BY height;

-- Tables 9-12: Q1-Q4 per age group (sql/q1.sql, q2.sql, q3_10y.sql, q4_10y.sql): our original, IPA
-- (mean of the ten runs) and k-anonymity estimates, beside the paper's three columns.
SELECT p.age_group, o.original, ROUND(o.ipa, 2) AS ipa, ROUND(o.kanon, 2) AS kanon,
  p.original AS paper_original, p.ipa_paper, p.kanon_paper FROM published p LEFT JOIN (
  SELECT k.group_key, k.original, k.estimate AS kanon, i.ipa FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10') k
  LEFT JOIN (SELECT group_key, AVG(estimate) AS ipa FROM (SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r1') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r2') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r3') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r4') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r5') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r6') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r7') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r8') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r9') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r10')) GROUP BY group_key) i ON k.group_key = i.group_key
  WHERE k.group_key NOT LIKE 'SUMMARY%'
) o ON CAST(p.age_group AS VARCHAR) = o.group_key WHERE p.query = 'Q1' ORDER BY p.age_group;

SELECT p.age_group, o.original, ROUND(o.ipa, 2) AS ipa, ROUND(o.kanon, 2) AS kanon,
  p.original AS paper_original, p.ipa_paper, p.kanon_paper FROM published p LEFT JOIN (
  SELECT k.group_key, k.original, k.estimate AS kanon, i.ipa FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10') k
  LEFT JOIN (SELECT group_key, AVG(estimate) AS ipa FROM (SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r1') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r2') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r3') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r4') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r5') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r6') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r7') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r8') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r9') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'ipa_r10')) GROUP BY group_key) i ON k.group_key = i.group_key
  WHERE k.group_key NOT LIKE 'SUMMARY%'
) o ON CAST(p.age_group AS VARCHAR) = o.group_key WHERE p.query = 'Q2' ORDER BY p.age_group;

SELECT p.age_group, o.original, ROUND(o.ipa, 2) AS ipa, ROUND(o.kanon, 2) AS kanon,
  p.original AS paper_original, p.ipa_paper, p.kanon_paper FROM published p LEFT JOIN (
  SELECT k.group_key, k.original, k.estimate AS kanon, i.ipa FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_k10') k
  LEFT JOIN (SELECT group_key, AVG(estimate) AS ipa FROM (SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r1') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r2') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r3') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r4') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r5') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r6') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r7') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r8') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r9') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r10')) GROUP BY group_key) i ON k.group_key = i.group_key
  WHERE k.group_key NOT LIKE 'SUMMARY%'
) o ON CAST(p.age_group AS VARCHAR) = o.group_key WHERE p.query = 'Q3' ORDER BY p.age_group;

SELECT p.age_group, o.original, ROUND(o.ipa, 2) AS ipa, ROUND(o.kanon, 2) AS kanon,
  p.original AS paper_original, p.ipa_paper, p.kanon_paper FROM published p LEFT JOIN (
  SELECT k.group_key, k.original, k.estimate AS kanon, i.ipa FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_k10') k
  LEFT JOIN (SELECT group_key, AVG(estimate) AS ipa FROM (SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r1') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r2') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r3') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r4') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r5') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r6') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r7') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r8') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r9') UNION ALL SELECT group_key, estimate FROM query_error('SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'ipa_r10')) GROUP BY group_key) i ON k.group_key = i.group_key
  WHERE k.group_key NOT LIKE 'SUMMARY%'
) o ON CAST(p.age_group AS VARCHAR) = o.group_key WHERE p.query = 'Q4' ORDER BY p.age_group;
