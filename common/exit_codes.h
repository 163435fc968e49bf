// The exit codes of `neardup` and `neardupd` (docs/cli.md, docs/operations.md): 0 success, 1 "no"
// (`neardup compare`: not near-duplicates), 2 a usage or configuration error (systemd does not
// restart the daemon on it: RestartPreventExitStatus=2), 3 any other failure.
#pragma once

namespace neardup {

inline constexpr int kExitOk = 0;
inline constexpr int kExitNo = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitFailure = 3;

}  // namespace neardup
