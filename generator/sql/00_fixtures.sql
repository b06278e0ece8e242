-- Models the project wrote itself (their provider is the project's name, table ``project``): test fixtures, the
-- exploit zoo and the honest reference kernels. They have their own pages and are never ranked beside models.
-- ``zoo`` marks those whose kernels are entries of the zoo manifest (shown on the integrity page).
SELECT r.model,
  bool_or(EXISTS (SELECT 1 FROM zoo_manifest AS m WHERE r.kernel_path = m.file OR r.kernel_path LIKE '%/' || m.file)) AS zoo
FROM records AS r
WHERE r.provider IN (SELECT provider FROM project)
GROUP BY r.model
