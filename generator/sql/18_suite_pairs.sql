-- Per pair of ranked suites: how many problems each has records for, how many of them have the same source in
-- both (by sha256) and how many share a level and number but not the source.
WITH ranked AS (
  SELECT DISTINCT suite FROM summary
),
seen AS (
  SELECT suite, count(DISTINCT problem_sha256) AS problems FROM best JOIN ranked USING (suite) GROUP BY suite
)
SELECT a.suite AS suite_a, b.suite AS suite_b, a.problems AS problems_a, b.problems AS problems_b,
  (SELECT count(DISTINCT sha_a) FROM suite_overlap AS o
   WHERE o.suite_a = a.suite AND o.suite_b = b.suite AND o.same_source) AS same_source,
  (SELECT count(*) FROM suite_overlap AS o
   WHERE o.suite_a = a.suite AND o.suite_b = b.suite AND NOT o.same_source) AS same_number_other_source
FROM seen AS a JOIN seen AS b ON a.suite < b.suite
