-- Q1: number of male stroke patients without surgery per 5-year age group
-- (group L = ages L..L+4). Source: IPA paper, "Real-world analysis", Q1 and
-- Table 9; also the h-ceiling paper's Q1. Run on table nps (load_dataset('nps')).
SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = 'M' AND surgery = 'N' AND disease = 'stroke' GROUP BY FLOOR(age/5)*5 ORDER BY age_group;
