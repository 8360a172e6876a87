"""pandas' frame-shaping keywords for ``read_pandas``: what pandas does around the parse.

The reader parses into Arrow; these keywords change the DataFrame made of it
the way ``pandas.read_csv`` does (``index_col``, ``parse_dates`` with
``date_format``, ``converters``, ``skipfooter``, ``dtype="category"``,
``usecols`` as a callable). :func:`split_keywords` takes them out of the
reader's options (asking the reader for text where pandas would hand a
function or a categorical the raw values); :func:`shape` applies them.

>>> import io, arrow_bridge
>>> frame = arrow_bridge.read_pandas(io.BytesIO(b"k,v\\nx,1\\ny,2\\n"), index_col="k", dtype={"v": "category"})
>>> frame.index.tolist(), str(frame.v.dtype)
(['x', 'y'], 'category')
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

import pyarrow as pa

if TYPE_CHECKING:
    import pandas as pd

#: The keywords :func:`split_keywords` takes out of the reader's options.
FRAME_KEYWORDS = ("index_col", "parse_dates", "date_format", "converters", "skipfooter")

Columns = Union[int, str, Sequence[Union[int, str]], None]


@dataclass
class FrameSteps:
    """What to do to the frame after the parse, in pandas' order."""

    index_col: Columns = None
    parse_dates: Union[bool, Sequence[Union[int, str]], None] = None
    date_format: Optional[str] = None
    converters: Mapping[Union[int, str], Callable[[str], Any]] = field(default_factory=dict)
    skipfooter: int = 0
    categories: Union[bool, Sequence[str]] = ()  # True: every column


def split_keywords(options: dict[str, Any]) -> tuple[dict[str, Any], FrameSteps]:
    """The reader's options and the frame's steps. Columns that get a
    converter or become categorical are read as text, as pandas hands them.

    >>> split_keywords({"sep": ";", "skipfooter": 2, "dtype": {"a": "category", "b": "int32"}})
    ({'sep': ';', 'dtype': {'a': 'string', 'b': 'int32'}}, FrameSteps(index_col=None, parse_dates=None, date_format=None, converters={}, skipfooter=2, categories=('a',)))
    """
    options = dict(options)
    steps = FrameSteps(**{key: options.pop(key) for key in FRAME_KEYWORDS if options.get(key) is not None})
    if steps.skipfooter < 0:
        raise ValueError(f"skipfooter must be >= 0, got {steps.skipfooter}")
    dtype = options.get("dtype")
    if isinstance(dtype, str) and dtype == "category":
        steps.categories, options["dtype"] = True, "string"
    elif isinstance(dtype, Mapping):
        steps.categories = tuple(name for name, kind in dtype.items() if isinstance(kind, str) and kind == "category")
        options["dtype"] = {name: "string" if name in steps.categories else kind for name, kind in dtype.items()}
    dates = steps.parse_dates if isinstance(steps.parse_dates, (list, tuple)) else ()
    text = {name: "string" for name in [*steps.converters, *dates] if isinstance(name, str)}
    if text and not isinstance(options.get("dtype"), str):  # one dtype for every column wins
        options["dtype"] = {**text, **(options.get("dtype") or {})}
    return options, steps


def shape(table: pa.Table, steps: FrameSteps, to_frame: Callable[[pa.Table], "pd.DataFrame"]) -> "pd.DataFrame":
    """The DataFrame of ``table`` with ``steps`` applied (footer rows dropped,
    converters, categories, dates, then the index).

    >>> import pandas as pd
    >>> shape(pa.table({"d": ["2020-01-02", "x"]}), FrameSteps(skipfooter=1, parse_dates=["d"]),
    ...       lambda t: t.to_pandas()).d.dt.day.tolist()
    [2]
    """
    import pandas as pd

    if steps.skipfooter:
        table = table.slice(0, max(table.num_rows - steps.skipfooter, 0))
    frame = to_frame(table)
    for key, convert in steps.converters.items():  # pandas infers the dtype of what they return
        name = _name(frame, key)
        frame[name] = pd.Series([convert(value) for value in frame[name]], index=frame.index, name=name)
    categorical = list(frame.columns) if steps.categories is True else list(steps.categories)
    for name in categorical:
        frame[name] = frame[name].astype("category")
    dates = steps.parse_dates
    if dates and dates is not True:
        for key in dates:  # from the text (read as such), as pandas parses it
            name = _name(frame, key)
            frame[name] = pd.to_datetime(frame[name], format=steps.date_format)
    if steps.index_col is not None and steps.index_col is not False:
        keys = steps.index_col if isinstance(steps.index_col, (list, tuple)) else [steps.index_col]
        frame = frame.set_index([_name(frame, key) for key in keys])
        if dates is True:  # pandas: parse the index
            frame.index = pd.to_datetime(frame.index, format=steps.date_format)
    return frame


def selected_names(usecols: Callable[[str], bool], names: Sequence[str]) -> list[str]:
    """``usecols`` given as a callable: the header names it accepts, in file order.

    >>> selected_names(lambda name: name.startswith("l_"), ["l_a", "x", "l_b"])
    ['l_a', 'l_b']
    """
    return [name for name in names if usecols(name)]


def positions_named(options: Mapping[str, Any]) -> bool:
    """Whether ``parse_dates`` or ``converters`` name a column by position.

    >>> positions_named({"parse_dates": [2]}), positions_named({"converters": {"a": str}})
    (True, False)
    """
    dates = options.get("parse_dates")
    keys = [*(dates if isinstance(dates, (list, tuple)) else ()), *(options.get("converters") or {})]
    return any(isinstance(key, int) for key in keys)


def name_positions(options: dict[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """``parse_dates`` and ``converters`` with positions replaced by the header's names.

    >>> name_positions({"parse_dates": [1], "converters": {0: str}}, ["a", "b"])
    {'parse_dates': ['b'], 'converters': {'a': <class 'str'>}}
    """
    def named(key: Union[int, str]) -> Union[int, str]:
        return names[key] if isinstance(key, int) else key

    options = dict(options)
    if isinstance(options.get("parse_dates"), (list, tuple)):
        options["parse_dates"] = [named(key) for key in options["parse_dates"]]
    if options.get("converters"):
        options["converters"] = {named(key): convert for key, convert in options["converters"].items()}
    return options


def _name(frame: "pd.DataFrame", key: Union[int, str]) -> str:
    """A column's name from its name or its position."""
    return frame.columns[key] if isinstance(key, int) else key
