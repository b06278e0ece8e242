-- Best-of-k result of every model on every problem, for the model and problem pages: unlike ``best``
-- it keeps problems the audit excluded (flagged) and the zoo models, and leaves out reproductions.
SELECT r.*, r.status = 'correct' AS correct,
  count(*) OVER w AS samples, count(*) FILTER (WHERE r.status = 'correct') OVER w AS correct_samples,
  EXISTS (SELECT 1 FROM excluded AS e WHERE e.hardware = r.hardware AND e.suite = r.suite
          AND e.level = r.level AND e.problem_id = r.problem_id) AS excluded
FROM records AS r
WHERE r.reproduces IS NULL
WINDOW w AS (PARTITION BY hardware, protocol, suite, level, problem_id, model)
QUALIFY row_number() OVER (
  PARTITION BY hardware, protocol, suite, level, problem_id, model
  ORDER BY r.status = 'correct' DESC, r.vs_eager DESC NULLS LAST, r.sample, r.path
) = 1
