-- Fig. 7 for the node release (guarantee=pure, partition=node): IL as epsilon varies, three seeded runs per
-- budget (seeds 1-3: reproducible, hence NOT private), NPS-like table (1,375,900 rows), and the
-- node-choice utility's parts by lattice height (Figs. 8-10's view of the sound mode: it scores
-- every node exactly and perturbs only the chosen one). IL from <output>_diagnostics
-- (diagnostics=true: NOT FOR PUBLICATION). Results: docs/results/ipa.md.
--   anonfusion -f sql/experiments/ipa_dp_epsilon.sql

-- Seeded DP calls are test fixtures, not private releases (their noise can be recomputed
-- from the seed): the session has to allow them, and every label of theirs says so.
SET anonfusion.seeded_dp = true;
SELECT COUNT(*) AS records FROM load_dataset('nps');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e0_1_s1', 0.1, 'partition=node, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e0_1_s2', 0.1, 'partition=node, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e0_1_s3', 0.1, 'partition=node, diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e0_5_s1', 0.5, 'partition=node, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e0_5_s2', 0.5, 'partition=node, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e0_5_s3', 0.5, 'partition=node, diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e1_s1', 1, 'partition=node, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e1_s2', 1, 'partition=node, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e1_s3', 1, 'partition=node, diagnostics=true, seed=3');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e2_s1', 2, 'partition=node, diagnostics=true, seed=1');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e2_s2', 2, 'partition=node, diagnostics=true, seed=2');
SELECT COUNT(*) AS released FROM ipa_release('nps', 'e2_s3', 2, 'partition=node, diagnostics=true, seed=3');

-- IL by epsilon (mean of three runs) and the nodes chosen.
SELECT epsilon, ROUND(AVG(il), 4) AS il, ROUND(MIN(il), 4) AS il_min, ROUND(MAX(il), 4) AS il_max, ROUND(AVG(ncp), 4) AS ncp, ROUND(AVG(emd), 4) AS emd, ROUND(AVG(rate), 4) AS rate, STRING_AGG(node, ' ') AS nodes FROM (SELECT 0.1 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e0_1_s1_diagnostics d, e0_1_s1_report r UNION ALL SELECT 0.1 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e0_1_s2_diagnostics d, e0_1_s2_report r UNION ALL SELECT 0.1 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e0_1_s3_diagnostics d, e0_1_s3_report r UNION ALL SELECT 0.5 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e0_5_s1_diagnostics d, e0_5_s1_report r UNION ALL SELECT 0.5 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e0_5_s2_diagnostics d, e0_5_s2_report r UNION ALL SELECT 0.5 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e0_5_s3_diagnostics d, e0_5_s3_report r UNION ALL SELECT 1 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e1_s1_diagnostics d, e1_s1_report r UNION ALL SELECT 1 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e1_s2_diagnostics d, e1_s2_report r UNION ALL SELECT 1 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e1_s3_diagnostics d, e1_s3_report r UNION ALL SELECT 2 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e2_s1_diagnostics d, e2_s1_report r UNION ALL SELECT 2 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e2_s2_diagnostics d, e2_s2_report r UNION ALL SELECT 2 AS epsilon, d.il, d.ncp, d.emd, d.rate, r.node FROM e2_s3_diagnostics d, e2_s3_report r) GROUP BY epsilon ORDER BY epsilon;

-- The utility over the lattice at epsilon = 1 (run 1): per height, the mean of each part.
SELECT height, COUNT(*) AS nodes, ROUND(AVG(ncp_total) / 1375900, 4) AS ncp_per_record, ROUND(AVG(class_total), 1) AS classes_lost, ROUND(AVG(noise_total), 0) AS noise_total, ROUND(MAX(probability), 4) AS max_probability FROM e1_s1_diagnostics_nodes GROUP BY height ORDER BY height;
