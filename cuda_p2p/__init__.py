"""GPU delivery of device output (CuPy). Not built yet: see the open issue."""
