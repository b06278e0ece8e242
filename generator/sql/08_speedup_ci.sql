-- Bootstrap 95% CI of the geometric-mean correct speedup (vs eager and vs torch.compile), as a Poisson
-- bootstrap: in each of 1000 resamples every correct problem gets a weight drawn from Poisson(1) (the
-- large-n limit of resampling with replacement), and the resample's statistic is the weighted mean of
-- log speedups. Weights come from hash(seed, resample, level, problem), not random(), so every build
-- gives the same interval, and one problem carries the same weight for every model in a resample.
-- Weighted sums are taken per level, and the all-levels group (level 0) adds them up.
-- For speed, the weights are drawn once per (problem, resample) and joined to each model's log speedups
-- under an integer group id; a weight of 0 adds nothing to a sum, so those pairs are not joined at all
-- (a resample in which every problem of a group drew 0 has no mean, as before, and is left out).
WITH observed AS (  -- correct best-of-k rows, g numbers the hardware x protocol x suite x model groups
  SELECT dense_rank() OVER (ORDER BY hardware, protocol, suite, model) AS g, hardware, protocol, suite, model,
         level, problem_id, ln(vs_eager) AS log_eager, ln(vs_compile) AS log_compile
  FROM best
  WHERE correct AND vs_eager IS NOT NULL
),
units AS (
  SELECT DISTINCT level, problem_id FROM observed
),
weights AS (
  SELECT level, problem_id, resample,
         CASE WHEN u < 0.36788 THEN 0 WHEN u < 0.73576 THEN 1 WHEN u < 0.91970 THEN 2
              WHEN u < 0.98101 THEN 3 WHEN u < 0.99634 THEN 4 WHEN u < 0.99941 THEN 5 ELSE 6 END AS w
  FROM (
    SELECT n.level, n.problem_id, r.i AS resample, (hash(20251101, r.i, n.level, n.problem_id) % 1000000) / 1e6 AS u
    FROM units AS n CROSS JOIN range(0, 1000) AS r(i)
  )
),
per_level AS (
  SELECT o.g, o.level AS level_group, w.resample,
         sum(w.w * o.log_eager) AS s_eager, sum(w.w) AS w_eager,
         sum(w.w * o.log_compile) AS s_compile, sum(w.w) FILTER (WHERE o.log_compile IS NOT NULL) AS w_compile
  FROM observed AS o JOIN weights AS w ON w.level = o.level AND w.problem_id = o.problem_id AND w.w > 0
  GROUP BY o.g, o.level, w.resample
),
sums AS (
  SELECT * FROM per_level
  UNION ALL
  SELECT g, 0 AS level_group, resample, sum(s_eager), sum(w_eager), sum(s_compile), sum(w_compile)
  FROM per_level
  GROUP BY g, resample
),
intervals AS (
  SELECT g, level_group,
    exp(quantile_cont(s_eager / nullif(w_eager, 0), 0.025)) AS speedup_eager_ci_low,
    exp(quantile_cont(s_eager / nullif(w_eager, 0), 0.975)) AS speedup_eager_ci_high,
    exp(quantile_cont(s_compile / nullif(w_compile, 0), 0.025)) AS speedup_compile_ci_low,
    exp(quantile_cont(s_compile / nullif(w_compile, 0), 0.975)) AS speedup_compile_ci_high
  FROM sums
  GROUP BY g, level_group
)
SELECT n.hardware, n.protocol, n.suite, n.model, i.level_group AS level,
  i.speedup_eager_ci_low, i.speedup_eager_ci_high, i.speedup_compile_ci_low, i.speedup_compile_ci_high
FROM intervals AS i
JOIN (SELECT DISTINCT g, hardware, protocol, suite, model FROM observed) AS n USING (g)
