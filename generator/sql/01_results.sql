-- Best-of-k result of every model on every problem: per hardware x protocol x suite x level x problem x
-- model the fastest correct sample counts (highest vs_eager among correct samples); with no correct
-- sample, the lowest-numbered sample stands (ties: lowest sample, then path). Reproduction records
-- re-measure a record and are left out. Zoo models and problems the audit excluded stay here (for the
-- model and problem pages, with ``excluded`` set) and leave in ``best``.
-- One grouped pass with arg_min over the ordering key (cheaper than a window over every record).
WITH chosen AS (
  SELECT arg_min(path, (status <> 'correct', coalesce(-vs_eager, 'infinity'::DOUBLE), sample, path)) AS path,
         count(*) AS samples, count(*) FILTER (WHERE status = 'correct') AS correct_samples
  FROM records
  WHERE reproduces IS NULL
  GROUP BY hardware, protocol, suite, level, problem_id, model
)
SELECT r.*, r.status = 'correct' AS correct, c.samples, c.correct_samples,
  EXISTS (SELECT 1 FROM excluded AS e WHERE e.hardware = r.hardware AND e.suite = r.suite
          AND e.level = r.level AND e.problem_id = r.problem_id) AS excluded
FROM chosen AS c
JOIN records AS r ON r.path = c.path
