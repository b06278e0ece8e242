-- Records that count for the leaderboard: no exploit-zoo or honest-kernel reference records, no
-- reproduction records (they re-measure a record, they are not another sample), and no problem that
-- the audit excluded on that hardware.
SELECT r.*, r.status = 'correct' AS correct
FROM records AS r
WHERE r.model NOT IN (SELECT model FROM zoo_models)
  AND r.reproduces IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM excluded AS e
    WHERE e.hardware = r.hardware AND e.suite = r.suite AND e.level = r.level AND e.problem_id = r.problem_id
  )
