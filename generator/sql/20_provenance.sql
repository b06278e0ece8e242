-- Where each ranked figure comes from, per hardware x suite x model x protocol: when it was measured (first and last
-- record date), by which harness and protocol versions, on which device, whose kernels (the records' provider) and
-- from which repository and commit. Reproductions re-measure a record and are left out.
SELECT r.hardware, r.suite, r.model, r.protocol,
  min(r.timestamp)[1:10] AS first_date,
  max(r.timestamp)[1:10] AS last_date,
  string_agg(DISTINCT r.harness_version, ', ' ORDER BY r.harness_version) AS harness_versions,
  string_agg(DISTINCT r.protocol_version, ', ' ORDER BY r.protocol_version) AS protocol_versions,
  string_agg(DISTINCT r.device_name, ', ' ORDER BY r.device_name) AS devices,
  string_agg(DISTINCT r.provider, '; ' ORDER BY r.provider) AS providers,
  string_agg(DISTINCT r.kernel_url, ' ' ORDER BY r.kernel_url) AS kernel_urls,
  string_agg(DISTINCT r.kernel_commit, ' ' ORDER BY r.kernel_commit) AS kernel_commits,
  any_value(d.dataset) AS dataset
FROM records AS r
LEFT JOIN datasets AS d ON d.url = r.kernel_url AND d.commit = r.kernel_commit AND d.model = r.model
WHERE r.reproduces IS NULL
GROUP BY r.hardware, r.suite, r.model, r.protocol
