// LineRelay: copies one child's output stream to one of our fds, a whole line at a time, with a
// prefix ("[rank 2] ") in front of each line. Lines are written with one write() each batch, so
// lines of different ranks never mix inside a line.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace tutti {

// Writes all of buf to fd, retrying EINTR, short writes and EAGAIN; gives up silently on other
// errors (a closed pipe: the reader is gone, and the ranks must still be run and reaped).
void WriteAll(int fd, const char* buf, size_t n);

class LineRelay {
 public:
  // A line longer than max_line is cut and written as several lines.
  LineRelay(std::string prefix, int out_fd, size_t max_line = 64 * 1024)
      : prefix_(std::move(prefix)), out_fd_(out_fd), max_line_(max_line) {}

  // Writes every complete line in pending + data; keeps the rest.
  void Feed(const char* data, size_t n);
  // Writes what is left (a last line without '\n') with a '\n' added.
  void Flush();

  size_t pending() const { return pending_.size(); }

 private:
  std::string prefix_;
  int out_fd_;
  size_t max_line_;
  std::string pending_;
};

}  // namespace tutti
