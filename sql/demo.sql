-- The anonfusion demo: load a dataset, look at its declared roles, generalize it and query
-- the release with plain SQL.

-- The UCI Adult census extract, with its attribute roles and hierarchies declared.
SELECT * FROM load_dataset('adult');

-- Which columns identify people (quasi-identifiers) and which are sensitive.
SELECT * FROM anon_roles WHERE table_name = 'adult';

-- Generalize the quasi-identifiers to one node of the lattice (one level per attribute). The
-- function returns the whole release (and registers it as adult_g); count it rather than print it.
SELECT COUNT(*) AS released_records FROM generalize('adult', 'adult_g', '1,0,0,1,1,1,1');

-- The release is an ordinary table.
SELECT age, COUNT(*) AS records FROM adult_g GROUP BY age ORDER BY age;
