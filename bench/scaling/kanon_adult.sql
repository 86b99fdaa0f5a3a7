-- kanon_anonymize on Adult: two warm-up calls, then five timed statements and their reports
-- (docs/results/scaling.md, "kanon's release from class cells").
SELECT COUNT(*) FROM load_dataset('adult');
SELECT COUNT(*) FROM kanon_anonymize('adult', 'w', 5);
SELECT COUNT(*) FROM kanon_anonymize('adult', 'w', 5);
\timing
SELECT COUNT(*) FROM kanon_anonymize('adult', 'a1', 5);
SELECT COUNT(*) FROM kanon_anonymize('adult', 'a2', 5);
SELECT COUNT(*) FROM kanon_anonymize('adult', 'a3', 5);
SELECT COUNT(*) FROM kanon_anonymize('adult', 'a4', 5);
SELECT COUNT(*) FROM kanon_anonymize('adult', 'a5', 5);
\timing
SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM a1_report UNION ALL SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM a2_report UNION ALL SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM a3_report UNION ALL SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM a4_report UNION ALL SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM a5_report;
