-- fast_p's denominator per hardware x protocol x suite x level (level_group 0 = all levels): the suite's own
-- problem count (table ``suite_sizes``, from generator/data/suites.json) less the problems the audit excluded
-- on that hardware. A suite or level the list does not know falls back to the problems seen there (by any
-- ranked model), with ``size_known`` false, so the page can say so.
WITH groups AS (
  SELECT DISTINCT hardware, protocol, suite FROM best
),
seen AS (
  SELECT hardware, protocol, suite, level, count(DISTINCT problem_id) AS n FROM best GROUP BY ALL
),
known AS (
  SELECT g.hardware, g.protocol, g.suite, s.level, s.n_problems AS suite_size, s.source,
    (SELECT count(*) FROM excluded AS e WHERE e.hardware = g.hardware AND e.suite = g.suite AND e.level = s.level)
      AS n_excluded
  FROM groups AS g
  JOIN suite_sizes AS s ON s.suite = g.suite
),
levels AS (
  SELECT hardware, protocol, suite, level, suite_size, n_excluded, suite_size - n_excluded AS n_problems,
         true AS size_known, source
  FROM known
  UNION ALL
  SELECT hardware, protocol, suite, level, NULL, 0, n, false, 'the problems seen on this hardware (suite size not known)'
  FROM seen
  WHERE (suite, level) NOT IN (SELECT (suite, level) FROM suite_sizes)
)
SELECT hardware, protocol, suite, level AS level_group, n_problems, suite_size, n_excluded, size_known, source
FROM levels
UNION ALL
SELECT hardware, protocol, suite, 0 AS level_group, sum(n_problems), sum(suite_size), sum(n_excluded),
       bool_and(size_known), string_agg(DISTINCT source, '; ' ORDER BY source)
FROM levels
GROUP BY hardware, protocol, suite
