-- What drives ArtUC's suppression on the EHRD-like table: code co-occurrence or code-frequency
-- concentration? The same code occurrences dealt out again across patients (a fixed
-- pseudo-random permutation of all occurrences; record sizes kept, a code drawn twice into one
-- record kept once) keep every code's frequency and destroy which codes go together.
--   anonfusion -f sql/experiments/artuc_shuffle.sql      (release build; ~2 minutes)
-- Results: docs/results/artuc.md, "Why so much suppression".
SELECT table_name, rows FROM load_dataset('ehrd', 52097);
-- Share of code occurrences, in blocks of 100 consecutive patients, from codes seen >= 5 times
-- in the block (real ICU patients' codes: 49 %; tests/rt_datasets.rs).
CREATE TABLE block_counts AS SELECT (patient_id - 1) / 100 AS block, c, COUNT(*) AS n FROM (SELECT patient_id, unnest(codes) AS c FROM ehrd) GROUP BY 1, 2;
SELECT ROUND(SUM(CASE WHEN n >= 5 THEN n ELSE 0 END) * 1.0 / SUM(n), 4) AS share_seen_5_per_100 FROM block_counts;
CREATE TABLE occ AS SELECT patient_id, c, ROW_NUMBER() OVER (ORDER BY patient_id, c) AS slot FROM (SELECT patient_id, unnest(codes) AS c FROM ehrd);
CREATE TABLE perm AS SELECT c, ROW_NUMBER() OVER (ORDER BY md5(CAST(slot AS VARCHAR))) AS slot FROM occ;
CREATE TABLE ehrd_shuffled AS SELECT e.patient_id, e.age, e.gender, s.codes FROM ehrd e JOIN (SELECT o.patient_id, array_sort(array_distinct(array_agg(p.c))) AS codes FROM occ o JOIN perm p ON o.slot = p.slot GROUP BY o.patient_id) s ON e.patient_id = s.patient_id ORDER BY e.patient_id;
CREATE TABLE age_h AS SELECT * FROM hierarchy('ehrd', 'age');
CREATE TABLE gender_h AS SELECT * FROM hierarchy('ehrd', 'gender');
SELECT * FROM declare_roles('ehrd_shuffled', 'patient_id=identifier, age=qi, gender=qi, codes=set_valued');
SELECT COUNT(*) AS leaves FROM hierarchy_from_table('ehrd_shuffled', 'age', 'age_h', 'numeric');
SELECT COUNT(*) AS leaves FROM hierarchy_from_table('ehrd_shuffled', 'gender', 'gender_h');
SELECT COUNT(*) AS leaves FROM load_hierarchy('ehrd_shuffled', 'codes', 'bundled:icd9');
SELECT COUNT(*) AS constraints FROM load_constraints('ehrd', 'UC1');
SELECT COUNT(*) AS constraints FROM load_constraints('ehrd', 'UC2');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'g_uc1', 'ehrd_uc1', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd_shuffled', 's_uc1', 'ehrd_uc1', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd', 'g_uc2', 'ehrd_uc2', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT COUNT(*) AS released FROM artuc('ehrd_shuffled', 's_uc2', 'ehrd_uc2', 10, 2, 0.04, 1000000000, 'seed=1');
SELECT codes, uc, occurrences, suppressed_codes, ROUND(100.0 * suppressed_codes / occurrences, 1) AS pct, ROUND(ul, 4) AS ul FROM (
  SELECT 'generated' AS codes, 'UC1' AS uc, (SELECT SUM(cardinality(codes)) FROM ehrd) AS occurrences, suppressed_codes, ul FROM g_uc1_report
  UNION ALL
  SELECT 'shuffled', 'UC1', (SELECT SUM(cardinality(codes)) FROM ehrd_shuffled), suppressed_codes, ul FROM s_uc1_report
  UNION ALL
  SELECT 'generated', 'UC2', (SELECT SUM(cardinality(codes)) FROM ehrd), suppressed_codes, ul FROM g_uc2_report
  UNION ALL
  SELECT 'shuffled', 'UC2', (SELECT SUM(cardinality(codes)) FROM ehrd_shuffled), suppressed_codes, ul FROM s_uc2_report
) ORDER BY uc, codes;
