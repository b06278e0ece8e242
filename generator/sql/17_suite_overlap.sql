-- Problems of two ranked suites compared by the sha256 of their source, over the problems with records in each:
-- one row per pair of a problem of ``suite_a`` and one of ``suite_b`` that have the same source (``same_source``)
-- or the same level and number. A problem renamed or resized between two revisions of a suite keeps its number
-- and changes its hash; only problems of the same source are compared head to head (``shared_speedups``).
WITH ranked AS (
  SELECT DISTINCT suite FROM summary
),
p AS (
  SELECT DISTINCT r.suite, r.level, r.problem_id, r.problem_name, r.problem_sha256
  FROM best AS r JOIN ranked USING (suite)
)
SELECT a.suite AS suite_a, b.suite AS suite_b, a.level AS level_a, a.problem_id AS id_a, a.problem_name AS name_a,
  b.level AS level_b, b.problem_id AS id_b, b.problem_name AS name_b, a.problem_sha256 AS sha_a, b.problem_sha256 AS sha_b,
  coalesce(a.problem_sha256 = b.problem_sha256, false) AS same_source
FROM p AS a
JOIN p AS b ON a.suite < b.suite
  AND (a.problem_sha256 = b.problem_sha256 OR (a.level = b.level AND a.problem_id = b.problem_id))
