#include "stream.hpp"
#include "posix_io.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace ndp {

Stream::Stream(std::int64_t id, const std::string& path, std::uint64_t page_size, bool writable)
    : id_(id), path_(path), page_size_(page_size), writable_(writable) {
  int flags = O_CLOEXEC | (writable ? (O_RDWR | O_CREAT) : O_RDONLY);
  fd_ = ::open(path.c_str(), flags, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), path);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    throw std::system_error(err, std::generic_category(), path);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw std::system_error(EISDIR, std::generic_category(), path);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

Stream::~Stream() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t Stream::span_bytes(std::uint64_t first, std::uint64_t n) const {
  std::uint64_t total = size();
  std::uint64_t begin = first * page_size_;
  if (begin >= total) return 0;
  std::uint64_t end = begin + n * page_size_;
  return (end > total ? total : end) - begin;
}

std::size_t Stream::read_at(std::uint64_t offset, std::uint8_t* dst, std::size_t length) const {
  return pread_fully(fd_, offset, dst, length, path_);
}

void Stream::write_at(std::uint64_t offset, const std::uint8_t* src, std::size_t length) {
  pwrite_fully(fd_, offset, src, length, path_);
  // Grow the page map; concurrent writers race only to a larger size.
  std::uint64_t end = offset + length;
  std::uint64_t seen = size_.load();
  while (seen < end && !size_.compare_exchange_weak(seen, end)) {
  }
}

}  // namespace ndp
