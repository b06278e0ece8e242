-- Best-of-k result of every model on every problem: per hardware x protocol x suite x level x problem x
-- model the fastest correct sample counts (highest vs_eager among correct samples); with no correct
-- sample, the lowest-numbered sample stands (ties: lowest sample, then path). A correct record whose time
-- is physically impossible (table ``physics``, from ``_physics``) keeps its status but does not count as
-- correct: ``correct`` is false and ``impossible`` true, so it leaves every aggregate with its reason.
-- Reproduction records re-measure a record and are left out. Fixture models and problems the audit
-- excluded stay here (for the model and problem pages, with ``excluded`` set) and leave in ``best``.
-- ``f32_*`` columns are the same choice made among float32-like correct samples only (the leaderboard's
-- "float32-like only" filter): the fastest such sample's speedups, NULL where the problem has none.
-- One grouped pass with arg_min over the ordering key (cheaper than a window over every record).
WITH judged AS (
  SELECT r.*, coalesce(ph.verdict, 'not-checked') AS physics, ph.reason AS physics_reason, ph.floor_ms,
         r.status = 'correct' AND coalesce(ph.verdict, '') <> 'impossible' AS counts
  FROM records AS r
  LEFT JOIN physics AS ph USING (path)
  WHERE r.reproduces IS NULL
),
chosen AS (
  SELECT arg_min(path, (NOT counts, status <> 'correct', coalesce(-vs_eager, 'infinity'::DOUBLE), sample, path)) AS path,
         arg_min(path, (coalesce(-vs_eager, 'infinity'::DOUBLE), sample, path))
           FILTER (WHERE counts AND precision_class = 'float32-like') AS f32_path,
         count(*) AS samples, count(*) FILTER (WHERE counts) AS correct_samples
  FROM judged
  GROUP BY hardware, protocol, suite, level, problem_id, model
)
SELECT j.* EXCLUDE (counts), j.counts AS correct, j.status = 'correct' AND j.physics = 'impossible' AS impossible,
  c.samples, c.correct_samples, c.f32_path IS NOT NULL AS f32_correct, f.vs_eager AS f32_vs_eager,
  f.vs_compile AS f32_vs_compile, f.shape_passed AS f32_shape_passed,
  EXISTS (SELECT 1 FROM excluded AS e WHERE e.hardware = j.hardware AND e.suite = j.suite
          AND e.level = j.level AND e.problem_id = j.problem_id) AS excluded
FROM chosen AS c
JOIN judged AS j ON j.path = c.path
LEFT JOIN judged AS f ON f.path = c.f32_path
