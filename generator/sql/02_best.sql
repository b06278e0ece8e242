-- The best-of-k rows that count for the leaderboard: no exploit-zoo or honest-kernel reference records
-- (they are shown on the integrity page) and no problem that the audit excluded on that hardware.
-- Reproductions are already left out of ``results``.
SELECT * EXCLUDE (excluded)
FROM results
WHERE NOT excluded AND model NOT IN (SELECT model FROM zoo_models)
