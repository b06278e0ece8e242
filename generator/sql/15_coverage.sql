-- How much of each public dataset the records cover, per hardware x suite x model x protocol: the dataset's
-- kernels (``datasets``, from ``schemas.DATASETS``) and how many of them have a record, matched by the repository
-- and commit the records name (a kernel is a sample of a problem: two problems may be given the same kernel text;
-- reproductions re-measure a record and add no kernel). A dataset whose records cover fewer is still being
-- evaluated: its figures are those of the kernels evaluated so far.
SELECT r.hardware, r.suite, r.model, r.protocol, d.dataset, any_value(d.kernels) AS kernels,
  count(DISTINCT (r.level, r.problem_id, r.sample)) AS evaluated
FROM records AS r
JOIN datasets AS d ON d.url = r.kernel_url AND d.commit = r.kernel_commit AND d.model = r.model
WHERE r.reproduces IS NULL
GROUP BY r.hardware, r.suite, r.model, r.protocol, d.dataset
