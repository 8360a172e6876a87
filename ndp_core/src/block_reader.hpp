// Positional block reads of one file into caller-owned memory.
//
// This is the host side of page I/O: the reader streams a file through a few
// reusable buffers instead of loading it whole. Reads never touch Python
// objects, so callers release the GIL around them and several threads may
// read the same file at once (pread keeps no shared file position).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace ndp {

class BlockReader {
 public:
  explicit BlockReader(const std::string& path);
  ~BlockReader();
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;

  // Fills dst[0, length) from the file at `offset`; returns bytes read, which
  // is less than `length` only at end of file. Throws std::system_error on I/O
  // failure (EINTR and short reads are retried).
  std::size_t read_at(std::uint64_t offset, std::uint8_t* dst, std::size_t length) const;

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  void close();
  bool closed() const { return fd_ < 0; }

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

}  // namespace ndp
