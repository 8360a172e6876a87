"""Benchmarks and demo for the ndp CSV -> Arrow reader (see benchmarks/README.md)."""
