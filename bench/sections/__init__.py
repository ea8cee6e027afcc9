"""The sections of the benchmark suite (bench/suite.py), one module each.

Every section is a function of the shared `harness.Run`: it measures, adds its rows to the table
and its raw figures to the results.
"""
