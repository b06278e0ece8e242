-- The best-of-k rows that count for the leaderboard: no fixture model (test fixtures, the exploit zoo,
-- honest reference kernels: table ``fixtures``) and no problem that the audit excluded on that hardware.
-- Reproductions are already left out of ``results``.
SELECT * EXCLUDE (excluded)
FROM results
WHERE NOT excluded AND model NOT IN (SELECT model FROM fixtures)
