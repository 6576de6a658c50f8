#include "tools/nccl/unique_id.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <vector>

#include "core/base/socket_util.h"
#include "core/store/tcp_store_server.h"

namespace tutti::nccl {
namespace {

// Layout inside the 128 bytes: magic, port, host (NUL-terminated), secret (NUL-terminated).
constexpr char kMagic[8] = {'t', 'u', 't', 't', 'i', 'I', 'D', '1'};
constexpr size_t kPortAt = 8, kHostAt = 12, kHostBytes = 64, kSecretAt = kHostAt + kHostBytes, kSecretBytes = 40;
static_assert(kSecretAt + kSecretBytes <= sizeof(ncclUniqueIdAbi), "id layout");

std::mutex& ServersMu() {
  static std::mutex mu;
  return mu;
}
std::vector<std::unique_ptr<TcpStoreServer>>& Servers() {
  static auto* servers = new std::vector<std::unique_ptr<TcpStoreServer>>;  // live until exit
  return *servers;
}

std::string FreshSecret() {
  std::random_device rd;
  static const char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 32; ++i) s += kHex[rd() % 16];
  return s;
}

Result<std::string> ThisHostAddress() {
  const char* spec = std::getenv("NCCL_SOCKET_IFNAME");
  if (spec == nullptr || *spec == '\0') spec = std::getenv("TUTTI_SOCKET_IFNAME");
  TUTTI_ASSIGN_OR_RETURN(std::vector<Interface> all, ListInterfaces());
  std::vector<Interface> picked = SelectInterfaces(all, spec ? spec : "");
  for (const Interface& i : picked)
    if (i.address.find(':') == std::string::npos) return i.address;  // IPv4 first
  if (!picked.empty()) return picked.front().address;
  return std::string("127.0.0.1");
}

}  // namespace

Result<ncclUniqueIdAbi> MakeUniqueId() {
  TUTTI_ASSIGN_OR_RETURN(std::string host, ThisHostAddress());
  if (host.size() >= kHostBytes) return InternalError("address " + host + " does not fit the unique id");
  const std::string secret = FreshSecret();
  TUTTI_ASSIGN_OR_RETURN(std::unique_ptr<TcpStoreServer> server, TcpStoreServer::Start("", 0, secret));
  ncclUniqueIdAbi id;
  std::memset(&id, 0, sizeof(id));
  std::memcpy(id.internal, kMagic, sizeof(kMagic));
  const uint32_t port = static_cast<uint32_t>(server->port());
  std::memcpy(id.internal + kPortAt, &port, sizeof(port));
  std::memcpy(id.internal + kHostAt, host.data(), host.size());
  std::memcpy(id.internal + kSecretAt, secret.data(), secret.size());
  std::lock_guard<std::mutex> lock(ServersMu());
  Servers().push_back(std::move(server));
  return id;
}

Result<IdContents> ReadUniqueId(const ncclUniqueIdAbi& id) {
  if (std::memcmp(id.internal, kMagic, sizeof(kMagic)) != 0)
    return InvalidArgument("the unique id was not made by this library's ncclGetUniqueId (all zeros, another "
                           "library's, or corrupted in transit)");
  IdContents c;
  uint32_t port = 0;
  std::memcpy(&port, id.internal + kPortAt, sizeof(port));
  c.port = static_cast<int>(port);
  c.host.assign(id.internal + kHostAt, strnlen(id.internal + kHostAt, kHostBytes));
  c.secret.assign(id.internal + kSecretAt, strnlen(id.internal + kSecretAt, kSecretBytes));
  if (c.port <= 0 || c.port > 65535 || c.host.empty() || c.host.size() == kHostBytes || c.secret.empty())
    return InvalidArgument("the unique id is corrupted (port " + std::to_string(c.port) + ", host \"" + c.host + "\")");
  return c;
}

}  // namespace tutti::nccl
