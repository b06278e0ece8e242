-- Leaderboard metrics per hardware x protocol x suite x model x level (level 0 = all levels).
-- fast_p denominators are the suite's problems less the audit's exclusions (``problems``; missing or failing
-- = not fast); speedups are geometric means over correct problems only (a physically impossible time is not
-- correct: it is counted in ``impossible``). Wins, ties and losses compare each correct problem's speedup with
-- the protocol's noise band (``noise_band``; 3% where the hardware has no faithfulness rows). ``hacked`` under the
-- standard protocol, which runs no integrity checks of its own, counts the reports the runner's judge refuted, and
-- is NULL where no record of the group was checked from outside (``outside_checked``; older records were not).
-- ``prec_*`` split the correct problems by the precision class of their best sample (``prec_unclassified``: a
-- record without one, such as the standard protocol's); ``shape_general`` is the share of correct problems whose
-- held-out shape re-check passed, over those where it ran (``shape_ran``; NULL where none ran). ``f32_*`` are the
-- same figures counting only float32-like correct kernels (``results.f32_*``: each problem's fastest such sample).
SELECT
  b.hardware, b.protocol, b.suite, b.model, b.level_group AS level,
  any_value(p.n_problems) AS n_problems,
  any_value(p.suite_size) AS suite_size,
  any_value(p.n_excluded) AS n_excluded,
  any_value(p.size_known) AS size_known,
  any_value(p.source) AS size_source,
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
  median(b.vs_eager) FILTER (WHERE b.correct) AS median_speedup,
  coalesce(any_value(n.band), 0.03) AS noise_band,
  any_value(n.band_recipe) AS band_recipe,
  count(*) FILTER (WHERE b.correct AND b.vs_eager > 1 + coalesce(n.band, 0.03)) AS wins,
  count(*) FILTER (WHERE b.correct AND b.vs_eager BETWEEN 1 / (1 + coalesce(n.band, 0.03)) AND 1 + coalesce(n.band, 0.03))
    AS ties,
  count(*) FILTER (WHERE b.correct AND b.vs_eager < 1 / (1 + coalesce(n.band, 0.03))) AS losses,
  exp(avg(ln(b.vs_compile)) FILTER (WHERE b.correct)) AS speedup_compile,
  count(*) FILTER (WHERE b.correct AND b.cand_peak_bytes IS NOT NULL AND b.base_peak_bytes IS NOT NULL) AS memory_measured,
  count(*) FILTER (WHERE b.correct AND b.cand_peak_bytes > b.base_peak_bytes)
    / nullif(count(*) FILTER (WHERE b.correct AND b.cand_peak_bytes IS NOT NULL AND b.base_peak_bytes IS NOT NULL), 0)
    AS memory_regression_share,
  exp(avg(ln(b.base_peak_bytes / b.cand_peak_bytes))
    FILTER (WHERE b.correct AND b.cand_peak_bytes > 0 AND b.base_peak_bytes > 0)) AS mem_eff,
  median(b.sol_score) FILTER (WHERE b.correct) AS median_sol_score,
  -- the standard protocol runs no integrity checks of its own: where the runner's judge checked none, none is known
  CASE WHEN b.protocol = (SELECT name FROM protocols WHERE reproduces_kernelbench)
        AND NOT coalesce(bool_or(b.outside_checked), false) THEN NULL
       ELSE count(*) FILTER (WHERE b.status = 'hacked') END AS hacked,
  count(*) FILTER (WHERE b.impossible) AS impossible,
  max(b.samples) AS max_samples,
  count(*) FILTER (WHERE b.correct AND b.precision_class = 'float32-like') / nullif(count(*) FILTER (WHERE b.correct), 0) AS prec_f32,
  count(*) FILTER (WHERE b.correct AND b.precision_class = 'TF32-like') / nullif(count(*) FILTER (WHERE b.correct), 0) AS prec_tf32,
  count(*) FILTER (WHERE b.correct AND b.precision_class = 'reduced') / nullif(count(*) FILTER (WHERE b.correct), 0) AS prec_reduced,
  count(*) FILTER (WHERE b.correct AND b.precision_class IS NULL) / nullif(count(*) FILTER (WHERE b.correct), 0) AS prec_unclassified,
  count(*) FILTER (WHERE b.correct AND b.shape_passed IS NOT NULL) AS shape_ran,
  count(*) FILTER (WHERE b.correct AND b.shape_passed) / nullif(count(*) FILTER (WHERE b.correct AND b.shape_passed IS NOT NULL), 0)
    AS shape_general,
  count(*) FILTER (WHERE b.f32_correct) AS f32_correct,
  count(*) FILTER (WHERE b.f32_correct) / count(*) AS f32_correct_share,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 0) / any_value(p.n_problems) AS f32_fast_0,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 0.5) / any_value(p.n_problems) AS f32_fast_0_5,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 0.8) / any_value(p.n_problems) AS f32_fast_0_8,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 1) / any_value(p.n_problems) AS f32_fast_1,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 1.5) / any_value(p.n_problems) AS f32_fast_1_5,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 2) / any_value(p.n_problems) AS f32_fast_2,
  exp(avg(ln(b.f32_vs_eager)) FILTER (WHERE b.f32_correct)) AS f32_speedup_eager,
  median(b.f32_vs_eager) FILTER (WHERE b.f32_correct) AS f32_median_speedup,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager > 1 + coalesce(n.band, 0.03)) AS f32_wins,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager BETWEEN 1 / (1 + coalesce(n.band, 0.03)) AND 1 + coalesce(n.band, 0.03))
    AS f32_ties,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_vs_eager < 1 / (1 + coalesce(n.band, 0.03))) AS f32_losses,
  exp(avg(ln(b.f32_vs_compile)) FILTER (WHERE b.f32_correct)) AS f32_speedup_compile,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_shape_passed IS NOT NULL) AS f32_shape_ran,
  count(*) FILTER (WHERE b.f32_correct AND b.f32_shape_passed)
    / nullif(count(*) FILTER (WHERE b.f32_correct AND b.f32_shape_passed IS NOT NULL), 0) AS f32_shape_general
FROM best_groups AS b
JOIN problems AS p USING (hardware, protocol, suite, level_group)
LEFT JOIN noise_band AS n ON n.hardware = b.hardware AND n.protocol = b.protocol
GROUP BY b.hardware, b.protocol, b.suite, b.model, b.level_group
