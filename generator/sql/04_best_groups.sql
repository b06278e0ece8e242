-- Each best row once under its own level and once under level_group 0 (all levels).
SELECT level AS level_group, * FROM best
UNION ALL
SELECT 0 AS level_group, * FROM best
