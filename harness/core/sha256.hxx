#pragma once
// SHA-256 through OpenSSL's libcrypto, so that a file can be compared with the digest
// `sha256sum` or `cmake -E sha256sum` recorded for it, whatever its modification time says.

#include <string>
#include <string_view>

namespace harness {

/// The SHA-256 digest of `bytes` as 64 lowercase hex digits, as `sha256sum` prints it.
std::string sha256_hex(std::string_view bytes);

} // namespace harness
