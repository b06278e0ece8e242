-- Head to head on the problems two suites share by source: per pair x hardware x protocol x model (of either
-- suite), over the shared problems it has a result for, how many are correct and their geometric-mean speedup.
WITH shared AS (
  SELECT DISTINCT suite_a, suite_b, sha_a AS sha FROM suite_overlap WHERE same_source
)
SELECT s.suite_a, s.suite_b, b.hardware, b.protocol, b.suite, b.model,
  count(*) AS attempted,
  count(*) FILTER (WHERE b.correct) AS correct,
  exp(avg(ln(b.vs_eager)) FILTER (WHERE b.correct)) AS speedup_eager
FROM shared AS s
JOIN best AS b ON b.problem_sha256 = s.sha AND b.suite IN (s.suite_a, s.suite_b)
GROUP BY s.suite_a, s.suite_b, b.hardware, b.protocol, b.suite, b.model
