"""Building blocks of the verified protocol: statistics, hidden input distributions, the precision
policy, timing, integrity checks and the static scan. ``evaluations.protocols.verified`` composes them.

The statistics, the precision policy's arithmetic and the static scan are pure and run on the CPU.
"""
