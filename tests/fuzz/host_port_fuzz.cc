// Fuzz target: "host:port" addresses read from the store (core/base/socket_util.h
// SplitHostPort, JoinHostPort; IPv6 hosts in brackets). Checked: an address that splits has a
// port in 1..65535 and the host before the last colon (brackets removed), and joining the parts
// splits back to them; host and port built from the input join and split back unchanged;
// errors are kProtocol.
#include <string>

#include "tests/fuzz/fuzz_util.h"
#include "core/base/socket_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tutti;  // NOLINT: a fuzz entry point
  std::string text(reinterpret_cast<const char*>(data), size);
  Result<std::pair<std::string, int>> hp = SplitHostPort(text);
  if (hp.ok()) {
    const auto& [host, port] = *hp;
    FUZZ_CHECK(port >= 1 && port <= 65535, "port " + std::to_string(port));
    size_t colon = text.rfind(':');
    std::string raw = text.substr(0, colon);
    FUZZ_CHECK(host == raw || "[" + host + "]" == raw, "host \"" + host + "\" from \"" + text + "\"");
    // Joining brackets a host with a colon, so it splits back (a host that is itself in
    // brackets, from "[[h]]:p", loses them: no real address looks like that).
    Result<std::pair<std::string, int>> again = SplitHostPort(JoinHostPort(host, port));
    bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
    if (!host.empty() && !bracketed)
      FUZZ_CHECK(again.ok() && *again == *hp, "\"" + text + "\" does not join back");
  } else {
    FUZZ_CHECK(hp.status().code() == Code::kProtocol, hp.status().ToString());
  }

  // Built: a host from the input (non-empty) and a port.
  fuzz::Input in(data, size);
  int port = 1 + in.U16() % 65535;
  std::string host = in.Rest();
  if (host.empty() || host.find('\0') != std::string::npos) return 0;
  std::string joined = JoinHostPort(host, port);
  Result<std::pair<std::string, int>> back = SplitHostPort(joined);
  bool bracketed = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (!bracketed)
    FUZZ_CHECK(back.ok() && back->first == host && back->second == port, "\"" + joined + "\" did not split back");
  return 0;
}
