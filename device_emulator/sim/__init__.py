"""The discrete-event engine the timing model runs on, free of any hardware:

* :mod:`~device_emulator.sim.events` - the event loop (modeled clock, ordered callbacks);
* :mod:`~device_emulator.sim.resources` - FIFO resources with identical servers, gates;
* :mod:`~device_emulator.sim.process` - processes (generators) and the commands they yield.
"""
