"""Dask integration (partitioned, distributed read_csv). Not built yet: see the open issue."""
