-- The problems of each suite level seen on a hardware x protocol (by any ranked model): the denominator
-- of fast_p. level_group 0 stands for all levels together.
WITH seen AS (
  SELECT DISTINCT hardware, protocol, suite, level, problem_id FROM best
)
SELECT hardware, protocol, suite, level AS level_group, count(*) AS n_problems FROM seen GROUP BY ALL
UNION ALL
SELECT hardware, protocol, suite, 0 AS level_group, count(*) AS n_problems FROM seen GROUP BY ALL
