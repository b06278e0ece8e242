-- Rank of each model within its hardware x protocol x suite x level: by fast_1 (the share of the suite's problems
-- on which it is correct and faster than eager; every problem counts, so a model with few correct kernels cannot
-- rank high on their speed alone), ties broken by the geometric-mean speedup. ``models`` is how many models the
-- group ranks: a rank means something only where it is more than 1.
SELECT hardware, protocol, suite, level, model,
  rank() OVER (PARTITION BY hardware, protocol, suite, level
               ORDER BY fast_1 DESC NULLS LAST, speedup_eager DESC NULLS LAST) AS rank,
  count(*) OVER (PARTITION BY hardware, protocol, suite, level) AS models
FROM summary
