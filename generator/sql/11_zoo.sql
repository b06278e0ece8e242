-- The exploit zoo and honest kernels: each manifest entry with what each protocol said of it. A record
-- belongs to an entry when its model is a fixture model (``fixtures``) and its kernel path ends with the entry's file.
WITH zoo AS (
  SELECT * FROM records WHERE model IN (SELECT model FROM fixtures WHERE zoo) AND reproduces IS NULL
),
matched AS (
  SELECT m.file, m.kind, m.problem, m.hack, m.expected_check, z.*, p.reproduces_kernelbench AS standard,
    -- the check shown: the expected one where it failed (a record can fail several), else the first failed
    coalesce(nullif(list_position(z.failed_names, m.expected_check), 0), 1) AS shown
  FROM zoo_manifest AS m
  LEFT JOIN zoo AS z
    ON z.kernel_path = m.file OR z.kernel_path LIKE '%/' || m.file
  LEFT JOIN protocols AS p ON p.name = z.protocol
)
SELECT any_value(file) AS file, any_value(kind) AS kind, any_value(problem) AS problem, hack,
  any_value(expected_check) AS expected_check, hardware,
  any_value(status) FILTER (WHERE standard) AS standard_status,
  any_value(vs_eager) FILTER (WHERE standard) AS standard_speedup,
  any_value(page) FILTER (WHERE standard) AS standard_page,
  any_value(vs_eager) FILTER (WHERE NOT standard) AS verified_speedup,
  any_value(vs_eager_fp32) FILTER (WHERE NOT standard) AS verified_speedup_fp32,
  any_value(status) FILTER (WHERE NOT standard) AS verified_status,
  any_value(failed_names[shown]) FILTER (WHERE NOT standard) AS verified_check,
  any_value(failed_evidences[shown]) FILTER (WHERE NOT standard) AS verified_evidence,
  any_value(array_to_string(failed_names, ', ')) FILTER (WHERE NOT standard) AS verified_checks,
  any_value(page) FILTER (WHERE NOT standard) AS verified_page
FROM matched
GROUP BY file, hack, hardware
ORDER BY any_value(kind), hack, hardware
