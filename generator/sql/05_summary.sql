-- Leaderboard metrics per hardware x protocol x suite x model x level (level 0 = all levels).
-- fast_p denominators are all problems seen for the suite level (missing or failing = not fast);
-- speedups are geometric means over correct problems only.
SELECT
  b.hardware, b.protocol, b.suite, b.model, b.level_group AS level,
  any_value(p.n_problems) AS n_problems,
  count(*) AS attempted,
  count(*) FILTER (WHERE b.correct) AS correct,
  count(*) FILTER (WHERE b.correct) / count(*) AS correct_share,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 0) / any_value(p.n_problems) AS fast_0,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 0.5) / any_value(p.n_problems) AS fast_0_5,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 0.8) / any_value(p.n_problems) AS fast_0_8,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 1) / any_value(p.n_problems) AS fast_1,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 1.5) / any_value(p.n_problems) AS fast_1_5,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 2) / any_value(p.n_problems) AS fast_2,
  exp(avg(ln(b.vs_eager)) FILTER (WHERE b.correct)) AS speedup_eager,
  exp(avg(ln(b.vs_compile)) FILTER (WHERE b.correct)) AS speedup_compile,
  count(*) FILTER (WHERE b.correct AND b.cand_peak_bytes IS NOT NULL AND b.base_peak_bytes IS NOT NULL) AS memory_measured,
  count(*) FILTER (WHERE b.correct AND b.cand_peak_bytes > b.base_peak_bytes)
    / nullif(count(*) FILTER (WHERE b.correct AND b.cand_peak_bytes IS NOT NULL AND b.base_peak_bytes IS NOT NULL), 0)
    AS memory_regression_share,
  exp(avg(ln(b.base_peak_bytes / b.cand_peak_bytes))
    FILTER (WHERE b.correct AND b.cand_peak_bytes > 0 AND b.base_peak_bytes > 0)) AS mem_eff,
  median(b.sol_score) FILTER (WHERE b.correct) AS median_sol_score,
  count(*) FILTER (WHERE b.status = 'hacked') AS hacked,
  max(b.samples) AS max_samples
FROM best_groups AS b
JOIN problems AS p USING (hardware, protocol, suite, level_group)
GROUP BY b.hardware, b.protocol, b.suite, b.model, b.level_group
