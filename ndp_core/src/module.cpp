// pybind11 bindings of the ndp_core engine.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <frameobject.h>  // after Python.h (pybind11)

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <unordered_map>

#include "block_reader.hpp"
#include "engine.hpp"

namespace py = pybind11;

namespace {

// Validates a writable, C-contiguous byte buffer and returns its base pointer.
std::uint8_t* writable_bytes(py::buffer& buffer, std::size_t& capacity) {
  py::buffer_info info = buffer.request(/*writable=*/true);
  if (info.itemsize != 1 || info.ndim != 1 || info.strides[0] != 1)
    throw std::invalid_argument("buffer must be a contiguous 1-D byte buffer");
  capacity = static_cast<std::size_t>(info.size);
  return static_cast<std::uint8_t*>(info.ptr);
}

// The host buffers of one in-flight command. Holding the exported buffer views,
// not just the objects, pins the memory: a bytearray cannot be resized, nor a
// numpy array's data reallocated, while a view on it is held. Views are
// released (GIL held) when the command's completion is consumed.
class Pins {
 public:
  // A contiguous 1-D byte buffer.
  std::uint8_t* bytes(py::handle obj, bool writable, std::size_t& length) {
    py::buffer_info& info = pin(obj, writable);
    if (info.itemsize != 1 || info.ndim != 1 || info.strides[0] != 1)
      throw std::invalid_argument("buffer must be a contiguous 1-D byte buffer");
    length = static_cast<std::size_t>(info.size);
    return static_cast<std::uint8_t*>(info.ptr);
  }
  // A writable contiguous 1-D int64 array (work counters); None gives none.
  std::int64_t* int64s(py::handle obj, std::int64_t& count) {
    count = 0;
    if (obj.is_none()) return nullptr;
    py::buffer_info& info = pin(obj, true);
    bool int64 = info.itemsize == 8 && (info.format == "l" || info.format == "q" ||
                                        info.format == "<l" || info.format == "<q");
    if (!int64 || info.ndim != 1 || info.strides[0] != 8)
      throw std::invalid_argument("counters must be a contiguous 1-D int64 array");
    count = static_cast<std::int64_t>(info.size);
    return static_cast<std::int64_t*>(info.ptr);
  }
  std::vector<AppOutput> outputs(const py::list& outputs) {
    std::vector<AppOutput> outs;
    for (py::handle h : outputs) {
      std::size_t capacity = 0;
      std::uint8_t* ptr = bytes(h, true, capacity);
      outs.push_back(AppOutput{ptr, static_cast<std::int64_t>(capacity), 0});
    }
    return outs;
  }

 private:
  py::buffer_info& pin(py::handle obj, bool writable) {
    py::buffer buffer = py::reinterpret_borrow<py::buffer>(obj);
    views_.push_back(std::make_unique<py::buffer_info>(buffer.request(writable)));
    return *views_.back();
  }
  std::vector<std::unique_ptr<py::buffer_info>> views_;
};

// How often a wait on the main thread lets Python's signal handlers run.
constexpr double kSignalCheckSeconds = 0.02;

// The main thread's ident, taken at import (threading knows it whichever thread imports).
unsigned long main_thread_ident = 0;

bool on_main_thread() { return PyThread_get_thread_ident() == main_thread_ident; }

// ---- KeyboardInterrupt past C++ callers
//
// Python code that C++ code calls back (a generator pyarrow's stream readers
// pull batches from) may meet Ctrl-C; raised there, the KeyboardInterrupt
// would become the C++ caller's own error (pyarrow: an ArrowInvalid, which
// `except KeyboardInterrupt` does not catch). Instead the callback ends
// quietly and asks for the KeyboardInterrupt to be raised once the main
// thread runs Python code outside its frame: in the frame that made the outer
// call, as soon as that call returns.
PyObject* interrupted_frame = nullptr;  // the callback's frame (a strong reference; GIL-guarded)

// Whether `frame` is `current` or one of the frames it was called from.
bool runs_in(PyFrameObject* current, PyObject* frame) {
  if (current == nullptr) return false;
  Py_INCREF(current);
  PyFrameObject* f = current;  // a new reference from here
  while (f) {
    bool found = reinterpret_cast<PyObject*>(f) == frame;
    PyFrameObject* back = found ? nullptr : PyFrame_GetBack(f);
    Py_DECREF(f);
    if (found) return true;
    f = back;
  }
  return false;
}

// A pending call (main thread, GIL held): raises KeyboardInterrupt, or asks
// to be called again at the next check while the callback's frame still runs.
int raise_interrupt_outside(void*) {
  if (runs_in(PyEval_GetFrame(), interrupted_frame) &&
      Py_AddPendingCall(&raise_interrupt_outside, nullptr) == 0)
    return 0;
  Py_CLEAR(interrupted_frame);
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  return -1;
}

void raise_keyboard_interrupt_after(const py::object& frame) {
  if (!PyFrame_Check(frame.ptr())) throw py::type_error("raise_keyboard_interrupt_after needs a frame");
  if (!on_main_thread())  // only the main thread gets KeyboardInterrupts, and runs pending calls
    throw std::runtime_error("raise_keyboard_interrupt_after is for the main thread");
  if (interrupted_frame != nullptr) return;  // one is on its way already
  interrupted_frame = frame.inc_ref().ptr();
  if (Py_AddPendingCall(&raise_interrupt_outside, nullptr) != 0) {  // the queue is full: at once, then
    Py_CLEAR(interrupted_frame);
    PyErr_SetInterrupt();
  }
}

double timeout_seconds(const py::object& timeout) {
  if (timeout.is_none()) return -1.0;
  double t = timeout.cast<double>();
  return t < 0 ? 0.0 : t;
}

[[noreturn]] void raise_timeout(std::uint64_t id) {
  PyErr_SetString(PyExc_TimeoutError,
                  ("command " + std::to_string(id) + " did not complete in time").c_str());
  throw py::error_already_set();
}

// The Python face of ndp::Engine. It owns the references that keep host
// buffers alive while their command is in flight: the engine itself never
// touches Python objects, so every blocking call here releases the GIL.
class PyEngine {
 public:
  PyEngine(std::uint64_t page_size, unsigned cores, std::size_t queue_depth)
      : core_(std::make_unique<ndp::Engine>(page_size, cores, queue_depth)) {}
  ~PyEngine() { close(); }

  ndp::Engine& core() { return *core_; }

  void close() {
    {
      py::gil_scoped_release release;  // workers may still be finishing apps
      core_->close();
    }
    keep_.clear();
  }

  std::uint64_t submit(ndp::Command cmd, std::shared_ptr<Pins> pins) {
    std::uint64_t id;
    {
      py::gil_scoped_release release;
      id = core_->submit(std::move(cmd));
    }
    // With the GIL held nobody can consume `id` between the check and the
    // insert; if it was consumed already, its buffers are no longer needed.
    if (core_->is_outstanding(id)) keep_[id] = std::move(pins);
    return id;
  }

  // On the main thread an interruptible wait goes in slices, running Python's
  // signal handlers between them (GIL held): Ctrl-C raises KeyboardInterrupt
  // while a long command runs instead of once it is done. The command stays
  // in flight then (its buffers kept): wait for it again to consume it. Other
  // threads cannot run signal handlers, so they wait in one piece.
  ndp::Completion wait(std::uint64_t id, const py::object& timeout, bool interruptible = true) {
    using clock = std::chrono::steady_clock;
    const double t = timeout_seconds(timeout);
    const bool sliced = interruptible && on_main_thread();
    const auto deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                             std::chrono::duration<double>(t < 0 ? 0.0 : t));
    std::optional<ndp::Completion> c;
    for (;;) {
      double left = t < 0 ? -1.0 : std::chrono::duration<double>(deadline - clock::now()).count();
      if (t >= 0 && left < 0) left = 0;
      double slice = sliced && (left < 0 || left > kSignalCheckSeconds) ? kSignalCheckSeconds : left;
      try {
        py::gil_scoped_release release;
        c = core_->wait(id, slice);
      } catch (const std::out_of_range& e) {
        throw py::key_error(e.what());
      }
      if (c) break;
      if (t >= 0 && clock::now() >= deadline) raise_timeout(id);
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
    keep_.erase(id);
    return std::move(*c);
  }

  std::vector<ndp::Completion> poll() {
    std::vector<ndp::Completion> done;
    {
      py::gil_scoped_release release;
      done = core_->poll();
    }
    for (const auto& c : done) keep_.erase(c.command_id);
    return done;
  }

 private:
  std::unique_ptr<ndp::Engine> core_;
  std::unordered_map<std::uint64_t, std::shared_ptr<Pins>> keep_;  // guarded by the GIL
};

ndp::Command base_command(ndp::Opcode op, std::uint64_t instance, std::int64_t stream,
                          std::uint64_t first_page, std::uint64_t n_pages) {
  ndp::Command cmd;
  cmd.opcode = op;
  cmd.instance = instance;
  cmd.stream = stream;
  cmd.first_page = first_page;
  cmd.n_pages = n_pages;
  return cmd;
}

// MINIT and MDEINIT as one call: not interrupted half way (they take the time
// of the instance's commands queued before them).
ndp::Completion wait_ok(PyEngine& self, std::uint64_t id, const py::object& timeout,
                        const char* what) {
  ndp::Completion c = self.wait(id, timeout, /*interruptible=*/false);
  if (c.status != ndp::status::OK)
    throw std::runtime_error(std::string(what) + " failed: " + ndp::status::name(c.status));
  return c;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ndp_core C++ engine: page I/O for the host and device paths.";
  main_thread_ident =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();

  // I/O failures become OSError(errno, message), so Python picks the usual
  // subclass (FileNotFoundError, PermissionError, ...).
  py::register_exception_translator([](std::exception_ptr error) {
    try {
      if (error) std::rethrow_exception(error);
    } catch (const std::system_error& e) {
      py::object exc = py::module_::import("builtins").attr("OSError")(e.code().value(), e.what());
      PyErr_SetObject(PyExc_OSError, exc.ptr());
    }
  });

  py::class_<ndp::BlockReader>(m, "BlockReader", R"doc(
Positional reads of one file into caller-owned buffers, GIL released.

Example:
    >>> import numpy as np
    >>> from ndp_core import BlockReader
    >>> reader = BlockReader("data.csv")
    >>> buf = np.empty(1 << 20, dtype=np.uint8)
    >>> n = reader.readinto(buf, offset=0)
)doc")
      .def(py::init<const std::string&>(), py::arg("path"))
      .def_property_readonly("size", &ndp::BlockReader::size, "File size in bytes.")
      .def_property_readonly("path", &ndp::BlockReader::path)
      .def_property_readonly("closed", &ndp::BlockReader::closed)
      .def(
          "readinto",
          [](const ndp::BlockReader& self, py::buffer buffer, std::uint64_t offset,
             py::object length) {
            std::size_t capacity = 0;
            std::uint8_t* dst = writable_bytes(buffer, capacity);
            std::size_t want = length.is_none() ? capacity : length.cast<std::size_t>();
            if (want > capacity) throw std::invalid_argument("length exceeds buffer capacity");
            py::gil_scoped_release release;
            return self.read_at(offset, dst, want);
          },
          py::arg("buffer"), py::arg("offset"), py::arg("length") = py::none(),
          "Read up to ``length`` bytes (default: the buffer's size) at ``offset``; "
          "returns the count, short only at end of file.")
      .def("close", &ndp::BlockReader::close)
      .def("__enter__", [](ndp::BlockReader& self) -> ndp::BlockReader& { return self; },
           py::return_value_policy::reference)
      .def("__exit__", [](ndp::BlockReader& self, py::args) { self.close(); });

  // ------------------------------------------------------------ the engine
  m.attr("MAX_PAGES_PER_COMMAND") = ndp::kMaxPagesPerCommand;
  m.attr("APP_ABI_VERSION") = NDP_APP_ABI_VERSION;
  m.attr("APP_CALL_WORDS") = NDP_APP_CALL_WORDS;
  m.attr("APP_OUTPUT_WORDS") = NDP_APP_OUTPUT_WORDS;
  static_assert(sizeof(AppCall) == NDP_APP_CALL_WORDS * 8, "AppCall must be all 8-byte words");
  static_assert(sizeof(AppOutput) == NDP_APP_OUTPUT_WORDS * 8, "AppOutput must be 3 words");
  py::dict layout;
#define NDP_WORD(field) layout[#field] = offsetof(AppCall, field) / 8
  NDP_WORD(abi_version); NDP_WORD(opcode); NDP_WORD(task); NDP_WORD(first_page);
  NDP_WORD(input); NDP_WORD(input_len); NDP_WORD(at_eof); NDP_WORD(state);
  NDP_WORD(state_size); NDP_WORD(outputs); NDP_WORD(n_outputs); NDP_WORD(counters);
  NDP_WORD(n_counters); NDP_WORD(error_offset); NDP_WORD(args); NDP_WORD(n_args);
#undef NDP_WORD
  m.attr("APP_CALL_LAYOUT") = layout;

  py::dict opcodes;
  for (ndp::Opcode op : {ndp::Opcode::READ, ndp::Opcode::WRITE, ndp::Opcode::MINIT,
                         ndp::Opcode::MREAD, ndp::Opcode::MWRITE, ndp::Opcode::MDEINIT,
                         ndp::Opcode::MRUN, ndp::Opcode::INIT_TSK, ndp::Opcode::READ_PROC_TSK,
                         ndp::Opcode::READ_FILT_TSK, ndp::Opcode::FINAL_TSK})
    opcodes[ndp::opcode_name(op)] = static_cast<int>(op);
  m.attr("OPCODES") = opcodes;
  py::dict statuses;
  for (int s : {0, 1, 2, 5, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28})
    statuses[ndp::status::name(s)] = s;
  m.attr("STATUSES") = statuses;

  m.def(
      "split_request",
      [](std::uint64_t first_page, std::uint64_t n_pages, std::uint64_t max_pages) {
        return ndp::split_request(first_page, n_pages, max_pages);
      },
      py::arg("first_page"), py::arg("n_pages"), py::arg("max_pages") = ndp::kMaxPagesPerCommand,
      R"doc(
Split a page range into NVMe-sized commands: a list of (first_page, n_pages).

Example:
    >>> split_request(10, 65_537)
    [(10, 65536), (65546, 1)]
)doc");

  m.def("raise_keyboard_interrupt_after", &raise_keyboard_interrupt_after, py::arg("frame"), R"doc(
Raise KeyboardInterrupt in the main thread as soon as it runs Python code
outside ``frame`` (a frame of the main thread) and the frames it calls.

For a generator that C++ code pulls from and that met Ctrl-C: C++ callers
turn an exception into one of their own (pyarrow's stream readers: an
ArrowInvalid, which ``except KeyboardInterrupt`` misses), so the generator
ends quietly instead and asks for this; the consumer that made the outer call
gets the KeyboardInterrupt as that call returns. One at a time: a second
call while one is pending does nothing.

Example:
    >>> import sys
    >>> raise_keyboard_interrupt_after(sys._getframe())  # in the generator, then return
)doc");

  py::class_<ndp::Completion>(m, "Completion", R"doc(
The (gathered) completion of one submitted request.

``status`` is 0 (OK) or a code from ``STATUSES``; ``result_sizes`` holds bytes
written per output (READ: bytes read; MREAD: per app output, summed over the
parts of a split request); ``error_offset`` is the byte offset of bad input
within the request (-1 if none); ``value`` is MINIT's instance id.
)doc")
      .def_readonly("command_id", &ndp::Completion::command_id)
      .def_readonly("status", &ndp::Completion::status)
      .def_readonly("app_status", &ndp::Completion::app_status)
      .def_readonly("result_sizes", &ndp::Completion::result_sizes)
      .def_readonly("error_offset", &ndp::Completion::error_offset)
      .def_readonly("value", &ndp::Completion::value)
      .def_readonly("raw_page", &ndp::Completion::raw_page)
      .def_property_readonly("ok", [](const ndp::Completion& c) { return c.status == 0; })
      .def_property_readonly("status_name",
                             [](const ndp::Completion& c) { return ndp::status::name(c.status); })
      .def("__repr__", [](const ndp::Completion& c) {
        std::string sizes;
        for (auto v : c.result_sizes) sizes += (sizes.empty() ? "" : ", ") + std::to_string(v);
        return "Completion(command_id=" + std::to_string(c.command_id) + ", status=" +
               ndp::status::name(c.status) + ", result_sizes=[" + sizes + "], error_offset=" +
               std::to_string(c.error_offset) + ")";
      });

  py::class_<PyEngine>(m, "Engine", R"doc(
The emulated device's command engine: queue pair, streams, StorageApp instances
and ``cores`` worker threads running the apps. Functional only: modeled time
comes from device_emulator's timing model.

Host buffers passed to ``submit_*`` are kept alive by the engine until the
command's completion is consumed by ``wait`` or ``poll``. Every request must be
consumed exactly once (``wait(cid)`` or ``poll()``).

Example:
    >>> import numpy as np
    >>> from ndp_core import Engine
    >>> with Engine(page_size=4096, cores=2) as eng:
    ...     s = eng.stream_create("data.csv")
    ...     buf = np.empty(2 * 4096, dtype=np.uint8)
    ...     done = eng.wait(eng.submit_read(s, 0, 2, buf))
    ...     done.result_sizes      # bytes read
)doc")
      .def(py::init<std::uint64_t, unsigned, std::size_t>(), py::arg("page_size") = 4096,
           py::arg("cores") = 2, py::arg("queue_depth") = 64)
      .def_property_readonly("page_size", [](PyEngine& e) { return e.core().page_size(); })
      .def_property_readonly("cores", [](PyEngine& e) { return e.core().cores(); })
      .def_property_readonly("queue_depth", [](PyEngine& e) { return e.core().queue_depth(); })
      .def_property_readonly("outstanding", [](PyEngine& e) { return e.core().outstanding(); },
                             "Requests submitted and not yet consumed.")
      .def(
          "stream_create",
          [](PyEngine& e, const std::string& path, bool writable) {
            py::gil_scoped_release release;
            return e.core().stream_create(path, writable);
          },
          py::arg("path"), py::arg("writable") = false, R"doc(
Open ``path`` on the host (normal permission checks; OSError on failure) and map
it to logical pages; returns the stream id. ``writable=True`` opens (creating if
needed) for WRITE / MWRITE.

Example:
    >>> s = eng.stream_create("data.csv"); eng.stream_pages(s)
)doc")
      .def(
          "stream_close",
          [](PyEngine& e, std::int64_t s) {
            try {
              e.core().stream_close(s);
            } catch (const std::out_of_range& err) {
              throw py::key_error(err.what());
            }
          },
          py::arg("stream"))
      .def(
          "stream_size",
          [](PyEngine& e, std::int64_t s) {
            try {
              return e.core().stream(s)->size();
            } catch (const std::out_of_range& err) {
              throw py::key_error(err.what());
            }
          },
          py::arg("stream"), "Size of the stream's file in bytes.")
      .def(
          "stream_pages",
          [](PyEngine& e, std::int64_t s) {
            try {
              return e.core().stream(s)->pages();
            } catch (const std::out_of_range& err) {
              throw py::key_error(err.what());
            }
          },
          py::arg("stream"), "Logical pages of the stream (the last one may be short).")
      .def(
          "minit",
          [](PyEngine& e, std::uintptr_t app, std::int64_t state_size,
             std::vector<std::int64_t> streams, const py::object& init, const py::object& timeout) {
            auto pins = std::make_shared<Pins>();
            ndp::Command cmd = base_command(ndp::Opcode::MINIT, 0, -1, 0, 0);
            if (!init.is_none()) {
              std::size_t length = 0;
              cmd.data = const_cast<std::uint8_t*>(pins->bytes(init, false, length));
              cmd.data_len = static_cast<std::int64_t>(length);
              state_size = std::max<std::int64_t>(state_size, cmd.data_len);
            }
            std::uint64_t inst;
            try {
              inst = e.core().instance_create(app, state_size, streams);
            } catch (const std::out_of_range& err) {
              throw std::invalid_argument(err.what());
            }
            cmd.instance = inst;
            std::uint64_t id = e.submit(std::move(cmd), std::move(pins));
            wait_ok(e, id, timeout, "MINIT");
            return inst;
          },
          py::arg("app"), py::arg("state_size") = 0, py::arg("streams") = std::vector<std::int64_t>{},
          py::arg("init") = py::none(), py::arg("timeout") = py::none(), R"doc(
MINIT: install the StorageApp at C address ``app`` (e.g. ``numba.cfunc(...).address``)
as a new instance with ``state_size`` zeroed bytes of private state (or at least
``len(init)`` bytes starting with ``init``: the app's parameters), allowed to
read only ``streams``; returns the instance id. The address must stay valid
(keep the cfunc object alive) until ``mdeinit``.

Example:
    >>> inst = eng.minit(my_app.address, state_size=64, streams=[s])
)doc")
      .def(
          "submit_read",
          [](PyEngine& e, std::int64_t stream, std::uint64_t first_page, std::uint64_t n_pages,
             py::object out) {
            auto pins = std::make_shared<Pins>();
            std::size_t capacity = 0;
            ndp::Command cmd = base_command(ndp::Opcode::READ, 0, stream, first_page, n_pages);
            cmd.data = pins->bytes(out, true, capacity);
            cmd.data_len = static_cast<std::int64_t>(capacity);
            return e.submit(std::move(cmd), std::move(pins));
          },
          py::arg("stream"), py::arg("first_page"), py::arg("n_pages"), py::arg("out"), R"doc(
READ pages [first_page, first_page + n_pages) of ``stream`` into ``out`` (a
writable uint8 array at least that long; the last page may be short). Requests
over MAX_PAGES_PER_COMMAND pages are split and gathered into one completion.
Returns the command id.

Example:
    >>> cid = eng.submit_read(s, 0, 4, buf); eng.wait(cid).result_sizes
)doc")
      .def(
          "submit_write",
          [](PyEngine& e, std::int64_t stream, std::uint64_t first_page, py::object data) {
            auto pins = std::make_shared<Pins>();
            std::size_t length = 0;
            const std::uint8_t* src = pins->bytes(data, false, length);
            std::uint64_t ps = e.core().page_size();
            ndp::Command cmd =
                base_command(ndp::Opcode::WRITE, 0, stream, first_page, (length + ps - 1) / ps);
            cmd.data = const_cast<std::uint8_t*>(src);  // only read by WRITE
            cmd.data_len = static_cast<std::int64_t>(length);
            return e.submit(std::move(cmd), std::move(pins));
          },
          py::arg("stream"), py::arg("first_page"), py::arg("data"),
          "WRITE ``data`` to a writable stream starting at ``first_page``; returns the command id.")
      .def(
          "submit_mread",
          [](PyEngine& e, std::uint64_t instance, std::int64_t stream, std::uint64_t first_page,
             std::uint64_t n_pages, py::list outputs, py::object counters,
             std::vector<std::int64_t> args, int fault) {
            auto pins = std::make_shared<Pins>();
            ndp::Command cmd = base_command(ndp::Opcode::MREAD, instance, stream, first_page, n_pages);
            cmd.outputs = pins->outputs(outputs);
            cmd.counters = pins->int64s(counters, cmd.n_counters);
            cmd.args = std::move(args);
            cmd.fault = fault;
            return e.submit(std::move(cmd), std::move(pins));
          },
          py::arg("instance"), py::arg("stream"), py::arg("first_page"), py::arg("n_pages"),
          py::arg("outputs") = py::list(), py::arg("counters") = py::none(),
          py::arg("args") = std::vector<std::int64_t>{}, py::arg("fault") = 0, R"doc(
MREAD: read pages of ``stream`` (one of the instance's streams) and run the
instance's app on them (one call with all the pages' bytes), writing into
``outputs`` (writable uint8 arrays) and adding to ``counters`` (int64 array).
A split request calls the app once per part, appending to the outputs.
On any non-OK status the instance state and counters are left as before.
``args`` (ints) reach the app as its parameters; ``fault`` injects a fault
(``ndp_core.device.FAULT_*``): the command then completes with IO_ERROR,
APP_ERROR, TIMEOUT or RETURNED_RAW.

Example:
    >>> cid = eng.submit_mread(inst, s, 0, 8, [out], counters)
    >>> c = eng.wait(cid); c.status, c.result_sizes
)doc")
      .def(
          "submit_mwrite",
          [](PyEngine& e, std::uint64_t instance, std::int64_t stream, std::uint64_t first_page,
             py::object data, py::list outputs, py::object counters) {
            auto pins = std::make_shared<Pins>();
            std::size_t length = 0;
            const std::uint8_t* src = pins->bytes(data, false, length);
            ndp::Command cmd = base_command(ndp::Opcode::MWRITE, instance, stream, first_page, 0);
            cmd.data = const_cast<std::uint8_t*>(src);  // the app's (read-only) input
            cmd.data_len = static_cast<std::int64_t>(length);
            cmd.outputs = pins->outputs(outputs);
            cmd.counters = pins->int64s(counters, cmd.n_counters);
            return e.submit(std::move(cmd), std::move(pins));
          },
          py::arg("instance"), py::arg("stream"), py::arg("first_page"), py::arg("data"),
          py::arg("outputs"), py::arg("counters") = py::none(), R"doc(
MWRITE: run the instance's app on host bytes ``data`` and write what it puts
in ``outputs[0]`` to ``stream`` (writable, one of the instance's streams) at
``first_page``. Returns the command id.
)doc")
      .def(
          "submit_mrun",
          [](PyEngine& e, std::uint64_t instance, py::object data, py::list outputs,
             py::object counters, std::vector<std::int64_t> args, int fault) {
            auto pins = std::make_shared<Pins>();
            std::size_t length = 0;
            const std::uint8_t* src = pins->bytes(data, false, length);
            ndp::Command cmd = base_command(ndp::Opcode::MRUN, instance, -1, 0, 0);
            cmd.data = const_cast<std::uint8_t*>(src);  // the app's (read-only) input
            cmd.data_len = static_cast<std::int64_t>(length);
            cmd.outputs = pins->outputs(outputs);
            cmd.counters = pins->int64s(counters, cmd.n_counters);
            cmd.args = std::move(args);
            cmd.fault = fault;
            return e.submit(std::move(cmd), std::move(pins));
          },
          py::arg("instance"), py::arg("data"), py::arg("outputs") = py::list(),
          py::arg("counters") = py::none(), py::arg("args") = std::vector<std::int64_t>{},
          py::arg("fault") = 0, R"doc(
MRUN: run the instance's app once on host bytes ``data`` (a packet delivered to
an SSDlet's input ports; no pages are read, at_eof=1), writing into
``outputs`` and adding to ``counters``; ``args``/``fault`` as for
``submit_mread``. Returns the command id.

Example:
    >>> cid = eng.submit_mrun(inst, packet, [out], counters, args=[0])
)doc")
      .def(
          "submit_task",
          [](PyEngine& e, int opcode, std::uint64_t instance, std::int64_t task,
             std::int64_t stream, std::uint64_t first_page, std::uint64_t n_pages,
             py::list outputs, py::object counters, std::vector<std::int64_t> args, int fault) {
            auto op = static_cast<ndp::Opcode>(opcode);
            if (op != ndp::Opcode::INIT_TSK && op != ndp::Opcode::READ_PROC_TSK &&
                op != ndp::Opcode::READ_FILT_TSK && op != ndp::Opcode::FINAL_TSK)
              throw std::invalid_argument("not a Summarizer task opcode");
            ndp::Command cmd = base_command(op, instance, stream, first_page, n_pages);
            cmd.task = task;
            auto pins = std::make_shared<Pins>();
            cmd.outputs = pins->outputs(outputs);
            cmd.counters = pins->int64s(counters, cmd.n_counters);
            cmd.args = std::move(args);
            cmd.fault = fault;
            return e.submit(std::move(cmd), std::move(pins));
          },
          py::arg("opcode"), py::arg("instance"), py::arg("task"), py::arg("stream") = -1,
          py::arg("first_page") = 0, py::arg("n_pages") = 0, py::arg("outputs") = py::list(),
          py::arg("counters") = py::none(), py::arg("args") = std::vector<std::int64_t>{},
          py::arg("fault") = 0, R"doc(
Summarizer commands: ``INIT_TSK n`` (app called with no input, opens task n),
``READ_PROC_TSK n`` / ``READ_FILT_TSK n`` (like MREAD, task n must be open),
``FINAL_TSK n`` (app called with no input and at_eof=1, closes task n). The
app sees the opcode and task number in its AppCall; ``args``/``fault`` as for
``submit_mread``. The task queue's decisions are taken in modeled time by the
device's timing model (device_emulator), which injects RETURNED_RAW here.

Example:
    >>> cid = eng.submit_task(OPCODES["INIT_TSK"], inst, 0)
)doc")
      .def(
          "mdeinit",
          [](PyEngine& e, std::uint64_t instance, const py::object& timeout) {
            std::int64_t size = e.core().instance_state_size(instance);
            if (size < 0) size = 0;  // unknown: the command reports INVALID_INSTANCE
            py::array_t<std::uint8_t> state(static_cast<py::ssize_t>(size));
            auto pins = std::make_shared<Pins>();
            std::size_t length = 0;
            ndp::Command cmd = base_command(ndp::Opcode::MDEINIT, instance, -1, 0, 0);
            cmd.data = pins->bytes(state, true, length);
            cmd.data_len = static_cast<std::int64_t>(length);
            std::uint64_t id = e.submit(std::move(cmd), std::move(pins));
            wait_ok(e, id, timeout, "MDEINIT");
            return state;
          },
          py::arg("instance"), py::arg("timeout") = py::none(), R"doc(
MDEINIT: wait for the instance's queued commands, free it and return its final
state (a uint8 array). Later commands on it complete with INVALID_INSTANCE.

Example:
    >>> final_state = eng.mdeinit(inst)
)doc")
      .def(
          "wait",
          [](PyEngine& e, std::uint64_t id, const py::object& timeout) { return e.wait(id, timeout); },
          py::arg("command_id"), py::arg("timeout") = py::none(),
          R"doc(
Block (GIL released) until request ``command_id`` completes and return its
Completion. Raises TimeoutError after ``timeout`` seconds, KeyError for an
unknown or already consumed id. On the main thread Ctrl-C interrupts the wait
(KeyboardInterrupt, within 20 ms), not the command: it stays in flight, and
``wait`` again consumes it.
)doc")
      .def("poll", &PyEngine::poll,
           "Return (and consume) every completed request not consumed yet, GIL released.")
      .def("close", &PyEngine::close,
           "Stop accepting commands, finish the queued ones, join the worker threads.")
      .def("__enter__", [](PyEngine& e) -> PyEngine& { return e; },
           py::return_value_policy::reference)
      .def("__exit__", [](PyEngine& e, py::args) { e.close(); });
}
