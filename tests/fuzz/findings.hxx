#pragma once
// Findings: inputs that broke a target's contract, saved once per distinct signature.

#include "targets.hxx"

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace harness::fuzz {

/// How an input broke the contract.
enum class FindingKind {
    exception, ///< an exception other than the documented one escaped, or an Error of another kind
    rule,      ///< the input was accepted but breaks one of the target's rules
    crash,     ///< the process died of a signal or exited on its own
    sanitizer, ///< AddressSanitizer, UndefinedBehaviorSanitizer or LeakSanitizer reported
    hang,      ///< the input ran longer than the per-input time limit
    memory,    ///< the process grew past the memory limit
};
inline constexpr std::size_t finding_kind_count = 6;
const char* finding_kind_name(FindingKind kind);

/// One finding: what kind, a signature that is the same for every input hitting the same defect,
/// and the whole story (message, or the sanitizer's report).
struct Finding {
    FindingKind kind;
    std::string signature;
    std::string report;
};

/// The signature of an exception message: the file, line and column it names and the values it
/// quotes are dropped, so that one defect reached through many inputs counts once.
std::string message_signature(std::string_view message);

/// The signature of a report on stderr (a sanitizer's, a crash's or a watchdog's stack): the error
/// type and the first frame in the harness's own sources.
std::string log_signature(std::string_view log);

/// The first "harness/dir/file.cxx:line" of a stack on stderr, or "".
std::string source_frame(std::string_view log);

/// 64-bit FNV-1a of the target, kind and signature: names the finding's files.
std::uint64_t finding_hash(const Target& target, const Finding& finding);

/// Saves findings into a folder: `<target>-<kind>-<hash><extension>` holds the input (the
/// shortest seen for that signature) and `<same>.txt` what happened and how to replay it.
class FindingStore {
public:
    explicit FindingStore(std::filesystem::path folder) : folder_(std::move(folder)) {}
    /// Saves the input unless a shorter one is there; returns the input's path.
    std::filesystem::path save(const Target& target, const Finding& finding, const std::string& input,
                               const InputContext& context, const std::string& origin) const;

private:
    std::filesystem::path folder_;
};

} // namespace harness::fuzz
