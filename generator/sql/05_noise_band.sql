-- Each protocol's own noise band on a hardware: the 95th percentile of |self-speedup - 1| of its timing recipe
-- in the faithfulness benchmark (a problem's reference timed against a copy of itself), the worst over the
-- suites measured. The standard protocol's recipe is KernelBench's; the verified protocol's is taken as its
-- recipe measured on the most problems with the smallest spread (its current one). A speedup within the band
-- of 1 is a tie. Hardware without benchmark rows gets the summary's default band.
WITH per AS (
  SELECT hardware, suite, recipe, count(*) AS n, quantile_cont(abs(self_speedup - 1), 0.95) AS p95,
         -- the standard protocol's recipe is KernelBench's ('kernelbench / standard'); the verified one's bear its name
         (SELECT p.name FROM protocols AS p
          WHERE recipe LIKE CASE WHEN p.reproduces_kernelbench THEN 'kernelbench / ' ELSE '' END || p.name || '%')
           AS protocol
  FROM self_speedup
  GROUP BY hardware, suite, recipe
),
ranked AS (
  SELECT *, row_number() OVER (PARTITION BY hardware, suite, protocol ORDER BY n DESC, p95, recipe) AS rk
  FROM per
  WHERE protocol IS NOT NULL
)
SELECT hardware, protocol, max(p95) AS band, string_agg(suite || ': ' || recipe, '; ' ORDER BY suite) AS band_recipe
FROM ranked
WHERE rk = 1
GROUP BY hardware, protocol
