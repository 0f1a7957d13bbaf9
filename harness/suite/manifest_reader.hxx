#pragma once
// Reading the JSON manifest of an exported kernel (triton_manifest.hxx, cutile_manifest.hxx): every
// field checked for its type and range as it is read, every error naming the file, the line of
// the key it is about and the key, and every path the manifest names kept inside the project.
// Internal to suite/.

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace harness::suite {

/// The largest manifest read, and the largest source, cubin or PTX file it names.
inline constexpr std::size_t max_manifest_bytes = 1024 * 1024;
inline constexpr std::size_t max_exported_file_bytes = 256 * 1024 * 1024;

/// One manifest being read; `writer` names the script that writes such manifests, for messages
/// ("missing (the manifest ci/triton_export.py writes has it)").
class ManifestReader {
public:
    ManifestReader(std::filesystem::path file, std::string text, std::string writer);

    /// The parsed JSON of `file`, an object; bad input (naming file, line and column) otherwise.
    static nlohmann::json parse(const std::filesystem::path& file, const std::string& text, const std::string& writer);

    [[noreturn]] void fail(const std::string& field, const std::string& message) const;
    /// `object`'s member the last part of `field` names ("launch.name": "name").
    const nlohmann::json& member(const nlohmann::json& object, const std::string& field) const;
    /// A string of 1 to `max_length` characters without control characters.
    std::string text(const nlohmann::json& object, const std::string& field, std::size_t max_length = 200) const;
    std::int64_t integer(const nlohmann::json& object, const std::string& field, std::int64_t low,
                         std::int64_t high) const;
    /// A boolean; false when the member is absent.
    bool flag(const nlohmann::json& object, const std::string& field) const;
    /// A SHA-256 digest: 64 lowercase hex digits.
    std::string digest(const nlohmann::json& object, const std::string& field) const;
    /// A path the manifest names relative to its own folder, staying inside `project`; absolute.
    std::filesystem::path path(const nlohmann::json& object, const std::string& field,
                               const std::filesystem::path& project) const;
    /// A file beside the manifest whose name ends with `extension` (".cubin"), inside `project`
    /// even through a link; absolute.
    std::filesystem::path file_beside(const nlohmann::json& object, const std::string& field,
                                      const std::string& extension, const std::filesystem::path& project) const;
    /// A kernel symbol: letters, digits and '_'.
    std::string symbol(const nlohmann::json& object, const std::string& field) const;

private:
    std::filesystem::path file_;
    std::string text_;
    std::string writer_;
};

} // namespace harness::suite
