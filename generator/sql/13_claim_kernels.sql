-- Each ranked kernel whose record carries the source's claimed speedup, beside what we measured: its
-- best-of-k standard and verified rows joined per hardware x suite x model x level x problem. The speedups
-- are those of correct rows (a failing or physically impossible row has none); the verified row's failed
-- check, reason (of an incorrect one) and labels say what moved it.
WITH s AS (SELECT * FROM best WHERE protocol = (SELECT name FROM protocols WHERE reproduces_kernelbench)),
v AS (SELECT * FROM best WHERE protocol = (SELECT name FROM protocols WHERE NOT reproduces_kernelbench)),
k AS (
  SELECT coalesce(s.hardware, v.hardware) AS hardware, coalesce(s.suite, v.suite) AS suite,
         coalesce(s.model, v.model) AS model, coalesce(s.level, v.level) AS level,
         coalesce(s.problem_id, v.problem_id) AS problem_id, coalesce(s.problem_name, v.problem_name) AS problem_name,
         coalesce(s.claimed_speedup, v.claimed_speedup) AS claimed,
         coalesce(s.claimed_baseline, v.claimed_baseline) AS claimed_baseline,
         s.status AS std_status, s.impossible AS std_impossible, CASE WHEN s.correct THEN s.vs_eager END AS std_speedup,
         s.page AS std_page,
         v.status AS ver_status, v.impossible AS ver_impossible, CASE WHEN v.correct THEN v.vs_eager END AS ver_speedup,
         CASE WHEN v.correct THEN v.vs_compile END AS ver_compile, v.failed_check AS ver_check, v.reason AS ver_reason,
         v.labels AS ver_labels,
         v.page AS ver_page
  FROM s
  FULL JOIN v ON s.hardware = v.hardware AND s.suite = v.suite AND s.model = v.model AND s.level = v.level
   AND s.problem_id = v.problem_id
)
SELECT * FROM k WHERE claimed IS NOT NULL
