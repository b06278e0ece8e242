-- Verified records by hardware, model, protocol version and status, and for incorrect ones by reason (1.3 records
-- carry one; older ones show none): what the methodology page's verdict table counts.
SELECT hardware, model, protocol_version, status, COALESCE(reason, '') AS reason, COUNT(*) AS records
FROM records
WHERE protocol = (SELECT name FROM protocols WHERE NOT reproduces_kernelbench)
GROUP BY hardware, model, protocol_version, status, COALESCE(reason, '')
