-- Bootstrap 95% CI of the geometric-mean correct speedup (vs eager and vs torch.compile), as a Poisson
-- bootstrap: in each of 1000 resamples every correct problem gets a weight drawn from Poisson(1) (the
-- large-n limit of resampling with replacement), and the resample's statistic is the weighted mean of
-- log speedups. Weights come from hash(seed, resample, level, problem), not random(), so every build
-- gives the same interval, and one problem carries the same weight for every model in a resample.
-- Weighted sums are taken per level, and the all-levels group (level 0) adds them up.
WITH weighted AS (
  SELECT b.hardware, b.protocol, b.suite, b.model, b.level AS level_group, r.i AS resample,
         ln(b.vs_eager) AS log_eager, ln(b.vs_compile) AS log_compile,
         (hash(20251101, r.i, b.level, b.problem_id) % 1000000) / 1e6 AS u
  FROM best AS b CROSS JOIN range(0, 1000) AS r(i)
  WHERE b.correct AND b.vs_eager IS NOT NULL
),
poisson AS (
  -- inverse CDF of Poisson(1): P(0) = 0.3679, P(<=1) = 0.7358, P(<=2) = 0.9197, ...
  SELECT *, CASE WHEN u < 0.36788 THEN 0 WHEN u < 0.73576 THEN 1 WHEN u < 0.91970 THEN 2
                 WHEN u < 0.98101 THEN 3 WHEN u < 0.99634 THEN 4 WHEN u < 0.99941 THEN 5 ELSE 6 END AS w
  FROM weighted
),
per_level AS (
  SELECT hardware, protocol, suite, model, level_group, resample,
         sum(w * log_eager) AS s_eager, sum(w) AS w_eager,
         sum(w * log_compile) AS s_compile, sum(w) FILTER (WHERE log_compile IS NOT NULL) AS w_compile
  FROM poisson
  GROUP BY hardware, protocol, suite, model, level_group, resample
),
sums AS (
  SELECT * FROM per_level
  UNION ALL
  SELECT hardware, protocol, suite, model, 0 AS level_group, resample,
         sum(s_eager), sum(w_eager), sum(s_compile), sum(w_compile)
  FROM per_level
  GROUP BY hardware, protocol, suite, model, resample
),
means AS (
  SELECT hardware, protocol, suite, model, level_group, resample,
         s_eager / nullif(w_eager, 0) AS m_eager, s_compile / nullif(w_compile, 0) AS m_compile
  FROM sums
)
SELECT hardware, protocol, suite, model, level_group AS level,
  exp(quantile_cont(m_eager, 0.025)) AS speedup_eager_ci_low,
  exp(quantile_cont(m_eager, 0.975)) AS speedup_eager_ci_high,
  exp(quantile_cont(m_compile, 0.025)) AS speedup_compile_ci_low,
  exp(quantile_cont(m_compile, 0.975)) AS speedup_compile_ci_high
FROM means
GROUP BY hardware, protocol, suite, model, level_group
