#include "core/store/store_bind.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include "core/base/env.h"
#include "core/base/socket_util.h"

namespace tutti {

namespace {
bool IsLoopback(const std::string& addr) {
  in_addr v4;
  if (inet_pton(AF_INET, addr.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  return addr == "::1";
}

bool IsLiteral(const std::string& addr) {
  in_addr v4;
  in6_addr v6;
  return inet_pton(AF_INET, addr.c_str(), &v4) == 1 || inet_pton(AF_INET6, addr.c_str(), &v6) == 1;
}

// Numeric addresses the name resolves to here (empty when it does not resolve).
std::vector<std::string> ResolveAll(const std::string& name) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::vector<std::string> out;
  if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0) return out;
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, freeaddrinfo);
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    const void* src = a->ai_family == AF_INET ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(a->ai_addr)->sin_addr)
                                              : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(a->ai_addr)->sin6_addr);
    if (inet_ntop(a->ai_family, src, buf, sizeof(buf)) != nullptr &&
        std::find(out.begin(), out.end(), buf) == out.end())
      out.push_back(buf);
  }
  return out;
}
}  // namespace

Result<StoreBind> ChooseStoreBind(const std::string& master_addr, const std::vector<std::string>& local_addrs,
                                  const Resolver& resolve) {
  if (auto forced = EnvRaw("TUTTI_STORE_BIND")) {
    std::string h = *forced == "0.0.0.0" || *forced == "::" ? "" : *forced;
    return StoreBind{h, "TUTTI_STORE_BIND=" + *forced};
  }
  const std::string& m = master_addr;
  if (m.empty()) return StoreBind{"", "no MASTER_ADDR"};
  if (m == "localhost") return StoreBind{"127.0.0.1", "MASTER_ADDR=localhost"};
  auto local = [&](const std::string& a) {
    return IsLoopback(a) || std::find(local_addrs.begin(), local_addrs.end(), a) != local_addrs.end();
  };
  if (IsLiteral(m)) {
    if (local(m)) return StoreBind{m, "MASTER_ADDR=" + m + " is an address of this host"};
    return StoreBind{"", "MASTER_ADDR=" + m + " is not an address of this host (NAT or a service address?): "
                             "listening on every interface; set TUTTI_STORE_BIND to choose"};
  }
  std::vector<std::string> addrs = resolve ? resolve(m) : ResolveAll(m);
  if (addrs.empty()) return UnavailableError("MASTER_ADDR=" + m + " does not resolve on the store's host");
  for (const std::string& a : addrs)
    if (!IsLoopback(a) && local(a)) return StoreBind{a, "MASTER_ADDR=" + m + " is " + a + " here"};
  return StoreBind{"", "MASTER_ADDR=" + m + " resolves to " + addrs[0] + " here, " +
                           (IsLoopback(addrs[0]) ? "a loopback address that other hosts cannot use"
                                                 : "not an address of this host") +
                           ": listening on every interface; set TUTTI_STORE_BIND to choose"};
}

Result<StoreBind> ChooseStoreBind(const std::string& master_addr) {
  std::vector<std::string> addrs;
  auto ifs = ListInterfaces();
  if (ifs.ok())
    for (const Interface& i : *ifs) addrs.push_back(i.address);
  return ChooseStoreBind(master_addr, addrs);
}

}  // namespace tutti
