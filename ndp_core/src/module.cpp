// pybind11 bindings of the ndp_core engine.
#include <pybind11/pybind11.h>

#include <stdexcept>
#include <system_error>

#include "block_reader.hpp"

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

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "ndp_core C++ engine: page I/O for the host and device paths.";

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
}
