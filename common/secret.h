// Which librdkafka properties hold secrets, so that their values are never printed: not by
// `neardupd --check-config`, not in logs, not in error messages.
#pragma once

#include <string_view>

namespace neardup {

// True for sasl.password, ssl.key.password, ssl.keystore.password,
// sasl.oauthbearer.client.secret, ssl.key.pem, sasl.oauthbearer.config and any other property
// whose name mentions a password or a secret.
inline bool is_secret_property(std::string_view name) {
  return name.find("password") != std::string_view::npos ||
         name.find("secret") != std::string_view::npos || name == "ssl.key.pem" ||
         name == "sasl.oauthbearer.config";
}

}  // namespace neardup
