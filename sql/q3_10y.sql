-- Q3 (10-year groups, as published in the IPA paper's Table 11): average length of stay
-- (days) of male stroke patients without surgery. Label L = ages L-5..L+4, the union of the
-- 5-year groups L-5 and L of Q1 (e.g. 10 = ages 5-14). Source: IPA paper.
SELECT FLOOR((age + 5)/10)*10 AS age_group, AVG(length_of_stay) AS avg_length_of_stay FROM nps WHERE sex = 'M' AND surgery = 'N' AND disease = 'stroke' GROUP BY FLOOR((age + 5)/10)*10 ORDER BY age_group;
