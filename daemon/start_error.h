// Why a daemon could not start (Daemon::create, Engine::create): the message, and whether the
// configuration is wrong (a topic it names is missing from the cluster, a secret cannot be read).
// neardupd exits 2 on a configuration error, which systemd does not restart
// (RestartPreventExitStatus=2), and 3 on an outage or any other failure, which it restarts.
#pragma once

#include <string>
#include <utility>

namespace neardup::daemon {

struct StartError {
  // NOLINTNEXTLINE(google-explicit-constructor): every other start-up error is just a message.
  StartError(std::string text, bool config = false)
      : message(std::move(text)), config_error(config) {}
  std::string message;
  bool config_error = false;
};

}  // namespace neardup::daemon
