-- The anonfusion demo: one patient table released three ways (k-anonymity under an h-ceiling
-- with its counterfeit catalog, differentially private microdata, the k-anonymous baseline),
-- diagnosis-code sets released with (k,k^m)-anonymity and checked independently, and what
-- each release costs an analyst on the papers' queries Q1-Q4. Every step is one SQL statement;
-- the comments are printed as section headers.

-- 1. Load. The synthetic NPS-like patient table (50,000 rows here; load_dataset('nps') gives the
-- full 1,375,900), with its hierarchies and attribute roles, in one statement.
SELECT * FROM load_dataset('nps', 50000, 7);
SELECT column_name, role, hierarchy, hierarchy_height FROM anon_roles WHERE table_name = 'nps';

-- 2. k-anonymity under an h-ceiling (Kim et al. 2017): no record is generalized beyond degree
-- h = 0.3; small classes are padded with counterfeit records instead of generalizing further.
SELECT COUNT(*) AS released_records FROM hceil_anonymize('nps', 'nps_h', 10, 0.3);
SELECT node, k, h, max_degree, classes, counterfeit_records, catalog_rows FROM nps_h_report;

-- The counterfeit catalog is published with the release: per group of classes, how many records
-- of each disease are counterfeit. It conceals which records those are.
SELECT * FROM nps_h_catalog ORDER BY class_ids, sensitive_value LIMIT 5;

-- An analyst's truthful view, from the release and the catalog alone: in each group the
-- records that may be counterfeit are suppressed and as many as the catalog counts removed;
-- what remains is real (Table 9 of the paper).
SELECT (SELECT COUNT(*) FROM nps_h) AS released_records,
       (SELECT COUNT(*) FROM truthful_view('nps_h', 'nps_h_catalog')) AS truthful_records,
       (SELECT COUNT(*) FROM truthful_view('nps_h', 'nps_h_catalog') WHERE class_id IS NULL) AS suppressed_records;

-- Checked by code that shares nothing with the method: 10-anonymity, the h-ceiling, the catalog.
SELECT * FROM verify_release('nps', 'nps_h', 'k=10, h=0.3, catalog', 'nps_h_catalog');

-- 3. Differentially private microdata with the disease kept (IPA, sound default: pure
-- epsilon-DP, here the adaptive partition the nps table declares as its plan: refined where the
-- noisy counts show many patients; 'guarantee=approx' gives (epsilon, delta)-DP). No DP release
-- without a budget; the budget is charged before any noise is drawn.
-- The demo's ledger is a scratch one (see its path below), never your own.
SELECT table_name, budget, budget_delta FROM set_privacy_budget('nps', 2.0, 'delta=1e-6');
SELECT COUNT(*) AS released_records FROM ipa_release('nps', 'nps_ipa', 1.0);
SELECT guarantee, node, steps, classes, epsilon, delta, released_cells, released_records FROM nps_ipa_report;
SELECT seq, event, guarantee, release, epsilon, spent, remaining, ledger_path FROM anon_privacy_ledger;

-- 4. The k-anonymous baseline (optimal full-domain generalization, k = 10) the papers compare with.
SELECT COUNT(*) AS released_records FROM kanon_anonymize('nps', 'nps_k10', 10);
SELECT node, ROUND(metric_value, 4) AS lm, classes FROM nps_k10_report;

-- 5. Demographics plus a set of ICD-9-CM codes per patient (a synthetic INFORMS-like table, 4,000
-- rows): (k,k^m)-anonymity under the paper's utility constraints UC1 (ArtUC, Poulis et al.).
SELECT * FROM load_dataset('informs', 4000, 1);
SELECT COUNT(*) AS constraints FROM load_constraints('informs', 'UC1');
SELECT COUNT(*) AS released_records FROM artuc('informs', 'informs_a', 'informs_uc1', 10, 2, 0.2, 200000);
SELECT ROUND(ncp, 3) AS ncp, ROUND(ul, 3) AS ul, clusters, suppressed_codes FROM informs_a_report;
SELECT * FROM verify_release('informs', 'informs_a', 'km=10:2, constraints=informs_uc1');

-- 6. What each release costs an analyst: the papers' Q1-Q4 (stroke patients without surgery per
-- age group: Q1/Q2 counts of men/women, Q3/Q4 their mean length of stay) answered from each
-- release (uniform within generalized values, counterfeit-aware with the catalog) next to the
-- original answer. The ARE row of each query is its mean relative error over the original's groups.
WITH q AS (
  SELECT 'Q1' AS query, 'k' AS release, * FROM query_error('SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10')
  UNION ALL SELECT 'Q1', 'h', * FROM query_error('SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h', 'nps_h_catalog')
  UNION ALL SELECT 'Q1', 'i', * FROM query_error('SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_ipa')
  UNION ALL SELECT 'Q2', 'k', * FROM query_error('SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10')
  UNION ALL SELECT 'Q2', 'h', * FROM query_error('SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_h', 'nps_h_catalog')
  UNION ALL SELECT 'Q2', 'i', * FROM query_error('SELECT FLOOR(age/5)*5, COUNT(*) FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_ipa')
  UNION ALL SELECT 'Q3', 'k', * FROM query_error('SELECT FLOOR((age + 5)/10)*10, AVG(length_of_stay) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_k10')
  UNION ALL SELECT 'Q3', 'h', * FROM query_error('SELECT FLOOR((age + 5)/10)*10, AVG(length_of_stay) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_h', 'nps_h_catalog')
  UNION ALL SELECT 'Q3', 'i', * FROM query_error('SELECT FLOOR((age + 5)/10)*10, AVG(length_of_stay) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_ipa')
  UNION ALL SELECT 'Q4', 'k', * FROM query_error('SELECT FLOOR((age + 5)/10)*10, AVG(length_of_stay) FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_k10')
  UNION ALL SELECT 'Q4', 'h', * FROM query_error('SELECT FLOOR((age + 5)/10)*10, AVG(length_of_stay) FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_h', 'nps_h_catalog')
  UNION ALL SELECT 'Q4', 'i', * FROM query_error('SELECT FLOOR((age + 5)/10)*10, AVG(length_of_stay) FROM nps WHERE sex = ''F'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR((age + 5)/10)*10', 'nps', 'nps_ipa')
)
SELECT query,
       CASE WHEN group_key = 'SUMMARY' THEN 'ARE' ELSE group_key END AS age_group,
       ROUND(MAX(CASE WHEN group_key <> 'SUMMARY' THEN original END), 1) AS original,
       ROUND(MAX(CASE WHEN release = 'k' THEN CASE WHEN group_key = 'SUMMARY' THEN rel_error ELSE estimate END END), 2) AS k_anonymity,
       ROUND(MAX(CASE WHEN release = 'h' THEN CASE WHEN group_key = 'SUMMARY' THEN rel_error ELSE estimate END END), 2) AS h_ceiling,
       ROUND(MAX(CASE WHEN release = 'i' THEN CASE WHEN group_key = 'SUMMARY' THEN rel_error ELSE estimate END END), 2) AS ipa
FROM q
WHERE group_key NOT LIKE 'SUMMARY %'
GROUP BY query, group_key
ORDER BY query, group_key = 'SUMMARY', TRY_CAST(group_key AS DOUBLE);
