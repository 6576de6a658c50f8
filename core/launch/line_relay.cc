#include "core/launch/line_relay.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace tutti {

void WriteAll(int fd, const char* buf, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, buf, n);
    if (w > 0) {
      buf += w;
      n -= static_cast<size_t>(w);
    } else if (w < 0 && errno == EINTR) {
      continue;
    } else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      struct pollfd p = {fd, POLLOUT, 0};
      poll(&p, 1, 100);
    } else {
      return;
    }
  }
}

void LineRelay::Feed(const char* data, size_t n) {
  pending_.append(data, n);
  std::string out;
  size_t start = 0;
  while (start < pending_.size()) {
    size_t nl = pending_.find('\n', start);
    size_t len;
    if (nl != std::string::npos && nl - start < max_line_) {
      len = nl - start + 1;
    } else if (pending_.size() - start >= max_line_) {
      len = max_line_;  // an overlong line: cut it
    } else {
      break;
    }
    out += prefix_;
    out.append(pending_, start, len);
    if (out.back() != '\n') out += '\n';
    start += len;
  }
  pending_.erase(0, start);
  if (!out.empty()) WriteAll(out_fd_, out.data(), out.size());
}

void LineRelay::Flush() {
  if (pending_.empty()) return;
  std::string out = prefix_ + pending_ + "\n";
  pending_.clear();
  WriteAll(out_fd_, out.data(), out.size());
}

}  // namespace tutti
