-- How faithful each timing recipe is: per hardware, suite and recipe, how close a problem's
-- reference comes to 1.00x against a separately built copy of itself (benchmarks/self_speedup.py).
-- Deviations are |self-speedup - 1|; quantiles interpolate linearly, as the benchmark's report does.
SELECT
    hardware,
    suite,
    recipe,
    count(*) AS problems,
    avg(CASE WHEN abs(self_speedup - 1) <= 0.01 THEN 1.0 ELSE 0.0 END) AS within_1pct,
    quantile_cont(abs(self_speedup - 1), 0.5) AS p50_dev,
    quantile_cont(abs(self_speedup - 1), 0.95) AS p95_dev,
    max(abs(self_speedup - 1)) AS max_dev,
    count(*) FILTER (WHERE abs(self_speedup - 1) > 0.03) AS beyond_3pct,
    min(ref_ms) AS min_ref_ms,
    max(ref_ms) AS max_ref_ms
FROM self_speedup
GROUP BY hardware, suite, recipe
