# Benchmark targets (included by the top Makefile). Not part of `make check`.
