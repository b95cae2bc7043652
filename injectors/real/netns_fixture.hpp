#pragma once
// Test fixture: two network namespaces joined by veth pairs, removed again
// even when a test fails. Traffic never leaves them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "injectors/real/process.hpp"

namespace gauntlet::injectors::real::testing {

class NetnsPair {
 public:
  // Namespaces "<a>" and "<b>"; link i is a<i> (10.201.<subnet+i>.1) <-> b<i>
  // (.2 and .3 on the b side).
  explicit NetnsPair(int links = 1) {
    static std::atomic<int> counter{0};
    int n = counter++;
    std::string base = "gt" + std::to_string(::getpid()) + "x" + std::to_string(n);
    a = base + "a";
    b = base + "b";
    subnet_ = 10 + (::getpid() % 10) * 10 + n % 10;
    ok_ = run({"ip", "netns", "add", a}) && run({"ip", "netns", "add", b});
    for (const std::string& ns : {a, b}) ok_ = ok_ && run({"ip", "-n", ns, "link", "set", "lo", "up"});
    for (int i = 0; ok_ && i < links; ++i) {
      std::string la = "a" + std::to_string(i), lb = "b" + std::to_string(i);
      ok_ = run({"ip", "-n", a, "link", "add", la, "type", "veth", "peer", "name", lb, "netns", b}) &&
            run({"ip", "-n", a, "addr", "add", addr(i, 1) + "/24", "dev", la}) &&
            run({"ip", "-n", b, "addr", "add", addr(i, 2) + "/24", "dev", lb}) &&
            run({"ip", "-n", b, "addr", "add", addr(i, 3) + "/24", "dev", lb}) &&
            run({"ip", "-n", a, "link", "set", la, "up"}) && run({"ip", "-n", b, "link", "set", lb, "up"});
    }
  }
  ~NetnsPair() {
    run({"ip", "netns", "del", a});
    run({"ip", "netns", "del", b});
  }
  NetnsPair(const NetnsPair&) = delete;
  NetnsPair& operator=(const NetnsPair&) = delete;

  bool ok() const { return ok_; }
  std::string addr(int link, int host) const {
    return "10.201." + std::to_string(subnet_ + link * 50) + "." + std::to_string(host);
  }
  Argv in_a() const { return {"ip", "netns", "exec", a}; }
  Argv in_b() const { return {"ip", "netns", "exec", b}; }

  // tc qdiscs, nft ruleset and links of namespace a, for before/after checks.
  std::string snapshot() const {
    std::string out;
    for (Argv cmd : {Argv{"tc", "qdisc", "show"}, Argv{"nft", "list", "ruleset"}, Argv{"ip", "link"},
                     Argv{"tc", "class", "show", "dev", "a0"}})
      out += "$ " + display(cmd) + "\n" + without_peer_netns_noise(run_command(wrap(in_a(), cmd)).output);
    return out;
  }

  std::string a, b;

 private:
  static bool run(const Argv& argv) { return run_command(argv).ok(); }
  // `ip link` complains on stderr when another test's namespace is being
  // created or deleted while it resolves a peer; that says nothing about a0.
  static std::string without_peer_netns_noise(const std::string& text) {
    const std::string noise = "Error: Peer netns reference is invalid.\n";
    std::string out = text;
    for (auto at = out.find(noise); at != std::string::npos; at = out.find(noise, at)) out.erase(at, noise.size());
    return out;
  }
  int subnet_ = 0;
  bool ok_ = false;
};

// Skips the current test unless we are root and `ip netns` works.
#define GAUNTLET_REQUIRE_NETNS()                                                 \
  do {                                                                           \
    if (!::gauntlet::injectors::real::is_root()) GTEST_SKIP() << "needs root";   \
    if (!::gauntlet::injectors::real::run_command({"ip", "netns", "list"}).ok()) \
      GTEST_SKIP() << "ip netns is unavailable";                                 \
  } while (0)

}  // namespace gauntlet::injectors::real::testing
