-- Claims against measurements per hardware x suite x model (the dataset) x level (level 0 = all): the geometric
-- mean of the source's claimed speedups, ours under the standard and the verified protocol (over the kernels
-- correct there), our verified speedup against torch.compile, the Pearson correlation of log claimed and log
-- standard speedups, and what moved the numbers: kernels lost to a failed verdict, flagged physically impossible,
-- or hacked (with the failing checks named), incorrect under verified (by reason), fast_1 (the share of the
-- dataset's kernels correct and faster than eager) under each protocol, and the verified precision classes.
WITH g AS (
  SELECT level AS level_group, * FROM claim_kernels
  UNION ALL
  SELECT 0 AS level_group, * FROM claim_kernels
),
by_reason AS (
  SELECT hardware, suite, model, level_group, coalesce(ver_reason, 'none recorded') AS reason, count(*) AS n
  FROM g WHERE ver_status = 'incorrect'
  GROUP BY ALL
),
reasons AS (
  SELECT hardware, suite, model, level_group, string_agg(reason || ' ' || n, ', ' ORDER BY reason) AS incorrect_by
  FROM by_reason GROUP BY ALL
)
SELECT hardware, suite, model, level_group AS level,
  count(*) AS kernels,
  exp(avg(ln(claimed)) FILTER (WHERE claimed > 0)) AS claimed_speedup,
  string_agg(DISTINCT claimed_baseline, ', ' ORDER BY claimed_baseline) AS claimed_baseline,
  count(std_status) AS std_run,
  count(std_speedup) AS std_correct,
  exp(avg(ln(std_speedup))) AS std_speedup,
  count(ver_status) AS ver_run,
  count(ver_speedup) AS ver_correct,
  exp(avg(ln(ver_speedup))) AS ver_speedup,
  exp(avg(ln(ver_compile))) AS ver_compile,
  count(*) FILTER (WHERE std_speedup > 1) / count(*) AS std_fast_1,
  count(*) FILTER (WHERE ver_speedup > 1) / count(*) AS ver_fast_1,
  corr(ln(claimed), ln(std_speedup)) FILTER (WHERE claimed > 0 AND std_speedup > 0) AS corr_claim_std,
  count(*) FILTER (WHERE claimed > 0 AND std_speedup > 0) AS corr_n,
  count(*) FILTER (WHERE std_impossible OR ver_impossible) AS impossible,
  count(*) FILTER (WHERE std_speedup IS NOT NULL AND ver_status IS NOT NULL AND ver_speedup IS NULL) AS lost_in_verified,
  count(*) FILTER (WHERE ver_status = 'hacked') AS hacked,
  string_agg(DISTINCT ver_check, ', ' ORDER BY ver_check) FILTER (WHERE ver_status = 'hacked') AS hacked_by,
  count(*) FILTER (WHERE ver_status = 'incorrect') AS incorrect,
  count(*) FILTER (WHERE ver_speedup IS NOT NULL AND ver_labels LIKE '%float32-like%') AS fp32_like,
  count(*) FILTER (WHERE ver_speedup IS NOT NULL AND ver_labels LIKE '%TF32-like%') AS tf32_like,
  count(*) FILTER (WHERE ver_speedup IS NOT NULL AND ver_labels LIKE '%reduced%') AS reduced,
  any_value(r.incorrect_by) AS incorrect_by
FROM g
LEFT JOIN reasons AS r USING (hardware, suite, model, level_group)
GROUP BY hardware, suite, model, level_group
