-- Best-of-k: per hardware x protocol x suite x problem x model the fastest correct sample counts
-- (highest vs_eager among correct samples); with no correct sample, the lowest-numbered sample stands.
SELECT s.*, count(*) OVER w AS samples, count(*) FILTER (WHERE s.correct) OVER w AS correct_samples
FROM scored AS s
WINDOW w AS (PARTITION BY hardware, protocol, suite, level, problem_id, model)
QUALIFY row_number() OVER (
  PARTITION BY hardware, protocol, suite, level, problem_id, model
  ORDER BY s.correct DESC, s.vs_eager DESC NULLS LAST, s.sample, s.path
) = 1
