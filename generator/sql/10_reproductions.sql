-- Reproduction records against the records they re-ran. The reproduction agrees when its speedup lies
-- inside the original's 95% CI (baseline statistic over the candidate time's CI bounds) or, when the
-- original has no CI, within 5% of the original speedup. A failed reproduction never agrees.
WITH pairs AS (
  SELECT r.path AS repro_path, r.page AS repro_page, r.status AS repro_status,
         o.path AS orig_path, o.page AS orig_page, o.vs_eager AS orig_speedup, r.vs_eager AS repro_speedup,
         o.base_ms IS NOT NULL AND o.cand_ci_low_ms > 0 AND o.cand_ci_high_ms > 0 AS has_ci,
         o.base_ms, o.cand_ci_low_ms, o.cand_ci_high_ms
  FROM records AS r
  JOIN records AS o ON o.path = regexp_replace(r.reproduces, '^records/', '')
  WHERE r.reproduces IS NOT NULL
),
bounds AS (
  SELECT *,
    CASE WHEN has_ci THEN base_ms / cand_ci_high_ms ELSE orig_speedup * 0.95 END AS low,
    CASE WHEN has_ci THEN base_ms / cand_ci_low_ms ELSE orig_speedup * 1.05 END AS high
  FROM pairs
)
SELECT repro_path, repro_page, repro_status, orig_path, orig_page, orig_speedup, repro_speedup, has_ci, low, high,
  coalesce(repro_status = 'correct' AND repro_speedup BETWEEN low AND high, false) AS agrees
FROM bounds
