-- Q2: number of female stroke patients without surgery per 5-year age group
-- (group L = ages L..L+4). Source: IPA paper, "Real-world analysis", Q2 and
-- Table 10; also the h-ceiling paper's Q2. Run on table nps (load_dataset('nps')).
SELECT FLOOR(age/5)*5 AS age_group, COUNT(*) AS patients FROM nps WHERE sex = 'F' AND surgery = 'N' AND disease = 'stroke' GROUP BY FLOOR(age/5)*5 ORDER BY age_group;
