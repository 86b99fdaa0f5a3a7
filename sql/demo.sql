-- The anonfusion demo: bundled data loaded with its hierarchies and roles, the generalization
-- lattice explored from SQL, a release at a chosen node queried like any table, and the
-- papers' evaluation queries on the NPS-like table. It grows as the methods land.

-- 1. UCI Adult (30,162 rows) with the ARX hierarchies, in one statement.
SELECT * FROM load_dataset('adult');

-- Which columns are quasi-identifiers (generalized) and which is sensitive.
SELECT * FROM anon_roles WHERE table_name = 'adult';

-- The full-domain lattice: 2,160 nodes, each grouped into equivalence classes. The least
-- generalized nodes in which every class holds at least 5 records (5-anonymous, no suppression):
SELECT node, classes, min_class_size, ROUND(mean_degree, 3) AS mean_degree, ROUND(max_degree, 3) AS max_degree
FROM lattice_nodes('adult') WHERE min_class_size >= 5 ORDER BY mean_degree LIMIT 5;

-- Release at the best of them (registered as adult_g; count it rather than print 30,162 rows).
SELECT COUNT(*) AS released_records FROM generalize('adult', 'adult_g', '4,0,0,1,3,2,2');

-- The release is an ordinary table: numeric quasi-identifiers carry a label and bounds.
SELECT age, age_lo, age_hi, marital_status, COUNT(*) AS records
FROM adult_g GROUP BY 1, 2, 3, 4 ORDER BY records DESC LIMIT 5;

-- The optimal 5-anonymous release found by search instead of by hand (LM, 2 % suppression).
SELECT COUNT(*) AS released_records FROM kanon_anonymize('adult', 'adult_k5', 5, 'suppression=2');
SELECT node, ROUND(metric_value, 4) AS lm, suppressed_records, classes, nodes_evaluated, nodes_total
FROM adult_k5_report;

-- 2. The synthetic NPS-like patient table (1,375,900 rows), calibrated to the published
-- answers of the papers' Q1-Q4 on the real NPS.
SELECT * FROM load_dataset('nps');

-- Q1: male stroke patients without surgery per 5-year age group (published: 1, 2, 1, 9, ...).
SELECT FLOOR(age / 5) * 5 AS age_group, COUNT(*) AS patients
FROM nps WHERE sex = 'M' AND surgery = 'N' AND disease = 'stroke'
GROUP BY FLOOR(age / 5) * 5 ORDER BY age_group;

-- Q3 per 10-year group as the paper's Table 11 publishes it (ages L-5..L+4).
SELECT FLOOR((age + 5) / 10) * 10 AS age_group, ROUND(AVG(length_of_stay), 1) AS avg_length_of_stay
FROM nps WHERE sex = 'M' AND surgery = 'N' AND disease = 'stroke'
GROUP BY FLOOR((age + 5) / 10) * 10 ORDER BY age_group;

-- The 10-anonymous baseline release of the papers' NPS comparisons, and Q1 on it as an analyst
-- would naively run it: the age bands are labels now, so the 5-year groups are gone.
SELECT COUNT(*) AS released_records FROM kanon_anonymize('nps', 'nps_k10', 10);
SELECT node, ROUND(metric_value, 4) AS lm, classes FROM nps_k10_report;
SELECT age, COUNT(*) AS patients FROM nps_k10
WHERE sex = 'M' AND surgery = 'N' AND disease = 'stroke' GROUP BY age ORDER BY MIN(age_lo);

-- What an analyst loses: Q1 answered from the release (uniform within each age band) against
-- the original, per group, with the mean relative error in the SUMMARY row.
SELECT group_key AS age_group, original, ROUND(estimate, 1) AS estimate, ROUND(rel_error, 3) AS rel_error
FROM query_error('SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) FROM nps WHERE sex = ''M'' AND surgery = ''N'' AND disease = ''stroke'' GROUP BY FLOOR(age/5)*5', 'nps', 'nps_k10');

-- And what the release guarantees, checked from the released table alone.
SELECT * FROM verify_release('nps', 'nps_k10', 'k=10');

-- 3. A synthetic RT-dataset: demographics plus a set of ICD-9-CM codes per patient.
SELECT * FROM load_dataset('informs');
SELECT code, COUNT(*) AS patients
FROM (SELECT unnest(codes) AS code FROM informs) GROUP BY code ORDER BY patients DESC LIMIT 5;
