#include "harness/core/sha256.hxx"

#include <fmt/format.h>
#include <openssl/sha.h>

namespace harness {

std::string sha256_hex(std::string_view bytes)
{
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
    std::string hex;
    hex.reserve(2 * SHA256_DIGEST_LENGTH);
    for (unsigned char byte : digest) hex += fmt::format("{:02x}", byte);
    return hex;
}

} // namespace harness
