-- Standard -> verified drop per hardware x suite x model x level (level 0 = all), over the problems the
-- model has best-of-k rows for under both protocols. Per problem, with a failing protocol counted as
-- speedup 1 (the user keeps PyTorch):
--   a = ln standard vs_eager (fp32 baseline, standard verdict and timing)
--   b = ln verified vs_eager_fp32 (fp32 baseline, verified verdict and timing)
--   c = ln verified vs_eager (TF32 baseline, verified verdict and timing)
-- drop = mean(a) - mean(c) = TF32 part [mean(b) - mean(c)] + hidden-inputs part [mean(a - b) over
-- problems whose verdict changed] + timing part [mean(a - b) over problems correct under both]. All
-- parts are reported as factors (exp), which multiply to the drop factor.
WITH pairs AS (
  SELECT s.hardware, s.suite, s.model, s.level, s.problem_id,
         s.correct AS std_correct, v.correct AS ver_correct,
         CASE WHEN s.correct THEN ln(s.vs_eager) ELSE 0 END AS a,
         CASE WHEN v.correct THEN ln(v.vs_eager_fp32) ELSE 0 END AS b,
         CASE WHEN v.correct THEN ln(v.vs_eager) ELSE 0 END AS c
  FROM best AS s
  JOIN best AS v
    ON s.protocol = (SELECT name FROM protocols WHERE reproduces_kernelbench)
   AND v.protocol = (SELECT name FROM protocols WHERE NOT reproduces_kernelbench)
   AND s.hardware = v.hardware AND s.suite = v.suite
   AND s.level = v.level AND s.problem_id = v.problem_id AND s.model = v.model
),
grouped AS (
  SELECT level AS level_group, * FROM pairs UNION ALL SELECT 0 AS level_group, * FROM pairs
)
SELECT hardware, suite, model, level_group AS level,
  count(*) AS n_problems,
  count(*) FILTER (WHERE std_correct AND NOT ver_correct) AS lost_to_verdict,
  count(*) FILTER (WHERE NOT std_correct AND ver_correct) AS gained_by_verdict,
  exp(avg(a)) AS standard_speedup,
  exp(avg(c)) AS verified_speedup,
  exp(avg(a) - avg(c)) AS drop_factor,
  CASE WHEN count(b) = count(*) THEN exp(avg(b) - avg(c)) END AS tf32_factor,
  CASE WHEN count(b) = count(*) THEN exp(sum(CASE WHEN std_correct <> ver_correct THEN a - b ELSE 0 END) / count(*)) END
    AS hidden_inputs_factor,
  CASE WHEN count(b) = count(*) THEN exp(sum(CASE WHEN std_correct AND ver_correct THEN a - b ELSE 0 END) / count(*)) END
    AS timing_factor
FROM grouped
GROUP BY hardware, suite, model, level_group
