"""Number text kernels: decimal and ISO-8601 text to values and back.

Numba ``nopython``/``nogil`` functions, ``cache=True``, that parse one field or
format one value in place: no allocation on the common paths, no exception, an
``ok`` flag (or a status) instead. The CSV kernels (:mod:`arrow_bridge.kernels`)
call them per field; nothing here knows about CSV.

Modules, one concern each:

* parsing: :mod:`.parse_ints`, :mod:`.parse_floats` (the float grammar),
  :mod:`.eisel_lemire` (``w * 10**q`` to a correctly rounded float: Clinger,
  Eisel-Lemire), :mod:`.exact_decimal` (the big-integer fallback),
  :mod:`.fast_floats` (plain floats at a buffer address, bounds known),
  :mod:`.parse_dates`;
* formatting: :mod:`.format_ints`, :mod:`.schubfach` (shortest digits of a
  float), :mod:`.format_floats`, :mod:`.format_dates`;
* building blocks: :mod:`.swar` (word-at-a-time and vector intrinsics) and
  :mod:`.internal` (helpers the modules here share; not API).
"""
