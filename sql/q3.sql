-- Q3: average length of stay (days) of male stroke patients without surgery per 5-year age
-- group, as printed in the IPA paper, "Real-world analysis", Q3, and in the
-- h-ceiling paper. The published Table 11 groups by 10 years: see q3_10y.sql.
SELECT FLOOR(age/5)*5 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = 'M' AND surgery = 'N' AND disease = 'stroke' GROUP BY FLOOR(age/5)*5 ORDER BY age_group;
