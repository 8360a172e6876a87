"""The emulated computational SSD. Not built yet: see the open issue."""
