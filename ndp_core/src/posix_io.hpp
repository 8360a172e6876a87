// Whole-range positional I/O on a file descriptor, shared by every reader and
// writer of the engine (pread/pwrite keep no shared file position, so threads
// may use one descriptor at once).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <unistd.h>

namespace ndp {

// Reads [offset, offset + length) into dst; returns bytes read, short only at
// end of file. EINTR and short reads are retried; errors throw system_error.
inline std::size_t pread_fully(int fd, std::uint64_t offset, std::uint8_t* dst, std::size_t length,
                               const std::string& path) {
  std::size_t done = 0;
  while (done < length) {
    ssize_t n = ::pread(fd, dst + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), path);
    }
    if (n == 0) break;  // end of file
    done += static_cast<std::size_t>(n);
  }
  return done;
}

// Writes all of src at offset; EINTR and short writes are retried.
inline void pwrite_fully(int fd, std::uint64_t offset, const std::uint8_t* src, std::size_t length,
                         const std::string& path) {
  std::size_t done = 0;
  while (done < length) {
    ssize_t n = ::pwrite(fd, src + done, length - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR) continue;
      throw std::system_error(errno, std::generic_category(), path);
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace ndp
