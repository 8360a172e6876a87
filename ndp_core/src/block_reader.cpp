#include "block_reader.hpp"
#include "posix_io.hpp"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

namespace ndp {

BlockReader::BlockReader(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), path);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::system_error(err, std::generic_category(), path);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
#ifdef POSIX_FADV_SEQUENTIAL
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
}

BlockReader::~BlockReader() { close(); }

void BlockReader::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::size_t BlockReader::read_at(std::uint64_t offset, std::uint8_t* dst,
                                 std::size_t length) const {
  if (fd_ < 0) throw std::system_error(EBADF, std::generic_category(), path_ + ": closed");
  return pread_fully(fd_, offset, dst, length, path_);
}

}  // namespace ndp
