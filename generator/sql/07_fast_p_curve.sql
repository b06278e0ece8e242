-- fast_p for p = 0, 0.05, ..., 3 per hardware x protocol x suite x model x level (level 0 = all).
WITH thresholds AS (SELECT round(i * 0.05, 2) AS p FROM range(0, 61) AS t(i))
SELECT
  b.hardware, b.protocol, b.suite, b.model, b.level_group AS level, t.p,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > t.p) / any_value(pr.n_problems) AS fast_p
FROM best_groups AS b
JOIN problems AS pr USING (hardware, protocol, suite, level_group)
CROSS JOIN thresholds AS t
GROUP BY b.hardware, b.protocol, b.suite, b.model, b.level_group, t.p
