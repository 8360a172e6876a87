"""One computational storage device per Dask worker.

A device (``device_emulator.ComputationalSSD``, ``ndp_core.device.HostOnly``,
...) holds threads, queues and state; it must be created once per worker and
reused by every task there, never pickled into tasks. So tasks carry only a
:class:`DeviceSpec` (a name plus how to build the device) and ask
:func:`device_for` for the device at run time:

* on a ``distributed`` worker where :func:`install_devices` registered a
  :class:`DevicePlugin` under the spec's key, the device that plugin created
  in its ``setup``;
* anywhere else (the threaded or synchronous scheduler, a worker without the
  plugin), one device per process, created on first use and then reused.

>>> spec = as_device_spec("modern-gen4")
>>> spec.key, spec.profile
('modern-gen4', 'modern-gen4')
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

from distributed.diagnostics.plugin import WorkerPlugin

DeviceLike = Union[None, str, Callable[..., Any], "DeviceSpec"]
PLUGIN_PREFIX = "ndp-device-"


@dataclass(frozen=True)
class DeviceSpec:
    """How to build a device, and the key it is found under on a worker.

    ``profile``: an emulated SSD profile name (``ComputationalSSD(profile,
    **options)``); ``factory``: a callable returning a device
    (``factory(**options)``). Exactly one is set.
    """

    key: str
    profile: Optional[str] = None
    factory: Optional[Callable[..., Any]] = field(default=None, compare=False)
    options: tuple = ()  # sorted (name, value) pairs

    def create(self, host_threads: Optional[int] = None) -> Any:
        """A new device (called once per worker or process). ``host_threads``:
        the threads the worker parses with; an emulated SSD models that many
        host cores unless the options set ``host.cores`` (a job Report then
        counts the cores that exist, not the profile's).

        >>> DeviceSpec("m", profile="modern-gen4").create(host_threads=2).profile["host.cores"]
        2
        """
        kwargs = dict(self.options)
        if self.factory is not None:
            return self.factory(**kwargs)
        from device_emulator import ComputationalSSD

        if host_threads and not any(_sets_host_cores(k) for k in kwargs):
            if not kwargs:  # the worker's own threads are no user override: keep the profile's name
                kwargs["name"] = self.profile
            kwargs["host.cores"] = int(host_threads)
        return ComputationalSSD(self.profile, **kwargs)

    @property
    def plugin_name(self) -> str:
        return PLUGIN_PREFIX + self.key

    def __dask_tokenize__(self) -> tuple:
        from dask.base import tokenize

        return ("DeviceSpec", self.key, self.profile, tokenize(self.factory), self.options)


def _sets_host_cores(option: str) -> bool:
    """Whether a ``ComputationalSSD`` keyword sets the modeled host cores."""
    from device_emulator.profile import ProfileError
    from device_emulator.profile.overrides import resolve_name

    try:
        return option == "host" or resolve_name(option) == "host.cores"
    except ProfileError:  # faults=, cost_model=, workers=, ...: not a profile parameter
        return False


def as_device_spec(device: DeviceLike, name: Optional[str] = None, **options: Any) -> Optional[DeviceSpec]:
    """A :class:`DeviceSpec` from ``device=``: None (host path), a profile or
    installed device name, a factory, or a DeviceSpec.

    >>> from ndp_core.device import HostOnly
    >>> as_device_spec(HostOnly, name="baseline").key
    'baseline'
    >>> as_device_spec(None) is None
    True
    """
    if device is None or isinstance(device, DeviceSpec):
        return device
    opts = tuple(sorted(options.items()))
    if isinstance(device, str):
        return DeviceSpec(name or device, profile=device, options=opts)
    if callable(device) and not _is_device(device):
        if name is None:
            from dask.base import tokenize

            label = getattr(device, "__qualname__", type(device).__name__).replace("<", "").replace(">", "")
            name = f"{label}-{tokenize(device, opts)[:8]}"
        return DeviceSpec(name, factory=device, options=opts)
    raise TypeError(
        f"device= takes a profile name, a factory returning a device or None, got {type(device).__name__}: "
        "a device object would be pickled into every task; pass a factory (e.g. the class) instead, "
        "or install one per worker with dask_plugin.install_devices(client, ...)")


def _is_device(obj: Any) -> bool:
    """An already built device (it has a ``schedule`` method and is not a class)."""
    return not isinstance(obj, type) and hasattr(obj, "schedule") and hasattr(obj, "page_size")


class DevicePlugin(WorkerPlugin):
    """Creates one device per worker in ``setup`` and closes it in ``teardown``.

    Only the :class:`DeviceSpec` is pickled (once, at registration).

    >>> plugin = DevicePlugin(as_device_spec("modern-gen4"))
    >>> plugin.name
    'ndp-device-modern-gen4'
    """

    def __init__(self, spec: DeviceSpec):
        self.spec = spec
        self.name = spec.plugin_name
        self.device: Any = None

    def setup(self, worker: Any) -> None:
        self.device = self.spec.create(host_threads=_threads_of(worker))

    def teardown(self, worker: Any) -> None:
        device, self.device = self.device, None
        close = getattr(device, "close", None)
        if callable(close):
            close()


_INSTALLED: dict[str, DeviceSpec] = {}  # specs installed from this process, by key


def install_devices(client: Any, device: Union[str, Callable[..., Any], DeviceSpec], *,
                    name: Optional[str] = None, **options: Any) -> str:
    """Gives every worker of ``client`` (and every worker that joins later)
    its own device, built once in the worker by a :class:`DevicePlugin`.

    ``device`` is a profile name or a factory; ``options`` go to
    ``ComputationalSSD``/the factory. Returns the key to pass as
    ``read_csv(..., device=key)``.

    >>> import dask_plugin, os, shutil, tempfile
    >>> from distributed import Client
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "data.csv"), "w") as f:
    ...     _ = f.write("a\\n" + "1\\n" * 1000)
    >>> with Client(processes=False, n_workers=1, dashboard_address=":0") as client:
    ...     key = install_devices(client, "modern-gen4")
    ...     ddf = dask_plugin.read_csv(os.path.join(folder, "*.csv"), device=key, split="dynamic")
    ...     key, len(ddf.compute())
    ('modern-gen4', 1000)
    >>> shutil.rmtree(folder)
    """
    spec = as_device_spec(device, name=name, **options)
    plugin = DevicePlugin(spec)
    register = getattr(client, "register_plugin", None) or client.register_worker_plugin
    register(plugin, name=plugin.name)
    _INSTALLED[spec.key] = spec
    return spec.key


def resolve_spec(device: DeviceLike) -> Optional[DeviceSpec]:
    """``read_csv``'s ``device=``: a name installed from this process maps to
    its spec (so the client can build one too), anything else as
    :func:`as_device_spec`."""
    if isinstance(device, str) and device in _INSTALLED:
        return _INSTALLED[device]
    return as_device_spec(device)


_process_devices: dict[str, Any] = {}
_process_lock = threading.Lock()


def device_for(spec: DeviceSpec) -> Any:
    """The device for ``spec`` in this task: the worker's (see the module
    docstring), else this process's, built on first use."""
    worker = current_worker()
    if worker is not None:
        plugin = getattr(worker, "plugins", {}).get(spec.plugin_name)
        if plugin is not None and getattr(plugin, "device", None) is not None:
            return plugin.device
    with _process_lock:
        if spec.key not in _process_devices:
            _process_devices[spec.key] = spec.create(host_threads=_threads_of(worker))
        return _process_devices[spec.key]


def _threads_of(worker: Any) -> Optional[int]:
    """The threads a ``distributed`` worker runs tasks on (None outside one)."""
    state = getattr(worker, "state", None)
    return getattr(state, "nthreads", None) or getattr(worker, "nthreads", None)


def page_size_of(spec: Optional[DeviceSpec], default: int = 4096) -> int:
    """The device's page size (planning partitions on the client), or ``default``."""
    if spec is None:
        return default
    return int(getattr(device_for(spec), "page_size", default) or default)


def current_worker() -> Any:
    """The ``distributed`` worker running this task, or None (another scheduler, or the client)."""
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:  # not inside a worker
        return None
