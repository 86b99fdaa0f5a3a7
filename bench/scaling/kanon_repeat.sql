-- kanon_anonymize three times on one loaded 5 M-row table, each call's report after it: the
-- calls after the first reuse the frequency table, so their search_ms is the search alone
-- (docs/results/scaling.md, "The search's probe in finer jobs").
SELECT COUNT(*) FROM load_dataset('nps', 5000000, 1);
SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10);
SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM nps_k_report;
DROP TABLE nps_k;
DROP TABLE nps_k_report;
SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10);
SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM nps_k_report;
DROP TABLE nps_k;
DROP TABLE nps_k_report;
SELECT COUNT(*) FROM kanon_anonymize('nps', 'nps_k', 10);
SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM nps_k_report;
