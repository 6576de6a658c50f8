// Status and Result<T>: how every internal function reports failure.
//
// A Status is a code plus a human-readable message. Messages name what failed in the words a user
// needs ("rank 2: recv from rank 0 (tag 7): peer closed the connection"). TUTTI_RETURN_IF_ERROR
// appends a file:line breadcrumb as the error travels up, so a log shows where it came from.
#pragma once

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

namespace tutti {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // the caller passed something wrong (bad size, bad rank, bad option)
  kInvalidUsage,     // a call that makes no sense now (not a member, destroyed communicator)
  kTimeout,          // a wait ran out of time
  kRemoteError,      // a peer failed, closed, or reported an error
  kSystemError,      // a system call failed (errno in the message)
  kProtocol,         // a malformed or unexpected frame from the wire or the store
  kAborted,          // the communicator was aborted
  kMismatch,         // the two sides of an operation disagree (size, type, ...)
  kUnavailable,      // a transport or device that is not present here
  kNotMember,        // this rank is not part of the group asked for
  kInternal,         // a bug in tutti
};

const char* CodeName(Code c);

// An OK status is one null pointer: making, moving, returning and dropping it costs next to
// nothing on the paths every call takes; an error holds its code and message on the heap.
class [[nodiscard]] Status {
 public:
  Status() = default;
  // (An OK code makes an OK status: it carries no message.)
  Status(Code code, std::string msg) {
    if (code != Code::kOk) rep_ = new Rep{code, std::move(msg)};
  }
  Status(const Status& o) : rep_(o.rep_ != nullptr ? new Rep(*o.rep_) : nullptr) {}
  Status(Status&& o) noexcept : rep_(o.rep_) { o.rep_ = nullptr; }  // (o is OK afterwards)
  Status& operator=(const Status& o) {
    if (this != &o) {
      Rep* copy = o.rep_ != nullptr ? new Rep(*o.rep_) : nullptr;
      delete rep_;
      rep_ = copy;
    }
    return *this;
  }
  Status& operator=(Status&& o) noexcept {
    if (this != &o) {
      delete rep_;
      rep_ = o.rep_;
      o.rep_ = nullptr;
    }
    return *this;
  }
  ~Status() { delete rep_; }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ != nullptr ? rep_->code : Code::kOk; }
  const std::string& message() const { return rep_ != nullptr ? rep_->msg : NoMessage(); }
  std::string ToString() const {
    if (ok()) return "OK";
    return std::string(CodeName(rep_->code)) + ": " + rep_->msg;
  }
  // Returns this status with "context: " in front of the message (no-op when OK).
  Status WithContext(const std::string& context) const {
    if (ok()) return *this;
    return Status(rep_->code, context + ": " + rep_->msg);
  }
  Status WithBreadcrumb(const char* file, int line) const;
  void IgnoreError() const {}

 private:
  struct Rep {
    Code code;
    std::string msg;
  };
  static const std::string& NoMessage() {
    static const std::string empty;
    return empty;
  }
  Rep* rep_ = nullptr;
};

inline Status OkStatus() { return Status(); }
inline Status InvalidArgument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
inline Status InvalidUsage(std::string m) { return Status(Code::kInvalidUsage, std::move(m)); }
inline Status TimeoutError(std::string m) { return Status(Code::kTimeout, std::move(m)); }
inline Status RemoteError(std::string m) { return Status(Code::kRemoteError, std::move(m)); }
inline Status ProtocolError(std::string m) { return Status(Code::kProtocol, std::move(m)); }
inline Status AbortedError(std::string m) { return Status(Code::kAborted, std::move(m)); }
inline Status MismatchError(std::string m) { return Status(Code::kMismatch, std::move(m)); }
inline Status UnavailableError(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
inline Status NotMemberError(std::string m) { return Status(Code::kNotMember, std::move(m)); }
inline Status InternalError(std::string m) { return Status(Code::kInternal, std::move(m)); }
// A failed system call: "what: strerror(err)".
inline Status SystemError(const std::string& what, int err = errno) {
  return Status(Code::kSystemError, what + ": " + std::strerror(err));
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = InternalError("Result constructed from an OK status");
  }
  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T& operator*() & { return *value_; }
  const T& operator*() const& { return *value_; }
  T&& operator*() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

inline const char* CodeName(Code c) {
  switch (c) {
    case Code::kOk: return "OK";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kInvalidUsage: return "invalid usage";
    case Code::kTimeout: return "timeout";
    case Code::kRemoteError: return "remote error";
    case Code::kSystemError: return "system error";
    case Code::kProtocol: return "protocol error";
    case Code::kAborted: return "aborted";
    case Code::kMismatch: return "mismatch";
    case Code::kUnavailable: return "unavailable";
    case Code::kNotMember: return "not a member";
    case Code::kInternal: return "internal error";
  }
  return "unknown";
}

inline Status Status::WithBreadcrumb(const char* file, int line) const {
  if (ok()) return *this;
  const char* base = std::strrchr(file, '/');
  return Status(rep_->code, rep_->msg + " [" + (base ? base + 1 : file) + ":" + std::to_string(line) + "]");
}

}  // namespace tutti

#define TUTTI_CONCAT_INNER_(a, b) a##b
#define TUTTI_CONCAT_(a, b) TUTTI_CONCAT_INNER_(a, b)

// Returns the error (with a file:line breadcrumb) from the enclosing function if expr failed.
#define TUTTI_RETURN_IF_ERROR(expr)                                      \
  do {                                                                   \
    ::tutti::Status tutti_st_ = (expr);                                  \
    if (!tutti_st_.ok()) return tutti_st_.WithBreadcrumb(__FILE__, __LINE__); \
  } while (0)

// TUTTI_ASSIGN_OR_RETURN(auto x, F()): x = value of F(), or return its error.
#define TUTTI_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto TUTTI_CONCAT_(tutti_res_, __LINE__) = (expr);                        \
  if (!TUTTI_CONCAT_(tutti_res_, __LINE__).ok())                            \
    return TUTTI_CONCAT_(tutti_res_, __LINE__).status().WithBreadcrumb(__FILE__, __LINE__); \
  lhs = std::move(TUTTI_CONCAT_(tutti_res_, __LINE__)).value()
