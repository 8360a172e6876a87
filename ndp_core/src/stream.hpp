// A stream: one host file seen by the device as logical pages.
//
// `ms_stream_create` in the papers: the host opens the file (so the OS checks
// permissions with the caller's rights) and the device addresses it by page.
// The last page may be short. Reads and writes use pread/pwrite, which keep
// no shared file position, so any number of worker threads may use a stream.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace ndp {

class Stream {
 public:
  Stream(std::int64_t id, const std::string& path, std::uint64_t page_size, bool writable);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  std::int64_t id() const { return id_; }
  const std::string& path() const { return path_; }
  bool writable() const { return writable_; }
  std::uint64_t page_size() const { return page_size_; }
  std::uint64_t size() const { return size_.load(); }
  // Pages covering the file; the last one may be short.
  std::uint64_t pages() const { return (size() + page_size_ - 1) / page_size_; }
  // Bytes pages [first, first + n) hold, clipped at end of file.
  std::uint64_t span_bytes(std::uint64_t first, std::uint64_t n) const;

  // Reads `length` bytes at `offset` (short only at end of file). Throws
  // std::system_error on I/O failure.
  std::size_t read_at(std::uint64_t offset, std::uint8_t* dst, std::size_t length) const;
  // Writes all of src at `offset`, growing the file. Throws std::system_error.
  void write_at(std::uint64_t offset, const std::uint8_t* src, std::size_t length);

 private:
  std::int64_t id_;
  std::string path_;
  std::uint64_t page_size_;
  bool writable_;
  int fd_ = -1;
  std::atomic<std::uint64_t> size_{0};
};

}  // namespace ndp
