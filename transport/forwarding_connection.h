// A Connection that passes every call to another one: tests derive from it and override the
// calls they watch.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transport/transport.h"

namespace tutti {

class ForwardingConnection : public Connection {
 public:
  explicit ForwardingConnection(std::unique_ptr<Connection> inner)
      : Connection(inner->peer()), inner_(std::move(inner)) {}

  const char* name() const override { return inner_->name(); }
  Status Enqueue(const FrameHeader& h, const void* payload, uint64_t cookie) override {
    return inner_->Enqueue(h, payload, cookie);
  }
  Result<bool> Progress(FrameSink& sink) override { return inner_->Progress(sink); }
  size_t max_payload() const override { return inner_->max_payload(); }
  void ExpectBulk(uint64_t bytes) override { inner_->ExpectBulk(bytes); }
  size_t queued_bytes() const override { return inner_->queued_bytes(); }
  bool HasLocalWork() const override { return inner_->HasLocalWork(); }
  void AppendWaitFds(std::vector<int>* fds) const override { inner_->AppendWaitFds(fds); }
  Status CheckPeerAlive() override { return inner_->CheckPeerAlive(); }
  std::shared_ptr<const ExposedRegion> Expose(const void* buf, size_t len) override { return inner_->Expose(buf, len); }
  Status PostRead(const std::string& descriptor, size_t offset, void* dst, size_t len, uint64_t cookie) override {
    return inner_->PostRead(descriptor, offset, dst, len, cookie);
  }
  Status PostWrite(const void* src, const std::string& descriptor, size_t offset, size_t len,
                   uint64_t cookie) override {
    return inner_->PostWrite(src, descriptor, offset, len, cookie);
  }
  bool RunAccesses() override { return inner_->RunAccesses(); }
  void ReleaseBuffers() override { inner_->ReleaseBuffers(); }
  void Close() override { inner_->Close(); }

 private:
  std::unique_ptr<Connection> inner_;
};

}  // namespace tutti
