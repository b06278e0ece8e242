"""Building blocks of the verified protocol: statistics, hidden input distributions, the precision
policy, integrity checks and the static scan (its timing is ``evaluations.timing``). ``evaluations.protocols.verified``
composes them.

The statistics, the precision policy's arithmetic and the static scan are pure and run on the CPU.
"""
