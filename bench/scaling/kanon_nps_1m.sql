-- kanon_anonymize on 1 M NPS-like rows: three timed statements (the first counts the frequency
-- table) and their reports (docs/results/scaling.md, "kanon's release from class cells").
SELECT COUNT(*) FROM load_dataset('nps', 1000000, 1);
\timing
SELECT COUNT(*) FROM kanon_anonymize('nps','nps_k',10);
SELECT COUNT(*) FROM kanon_anonymize('nps','nps_k2',10);
SELECT COUNT(*) FROM kanon_anonymize('nps','nps_k3',10);
\timing
SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM nps_k_report UNION ALL SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM nps_k2_report UNION ALL SELECT aggregate_ms, search_ms, materialize_ms, time_ms FROM nps_k3_report;
