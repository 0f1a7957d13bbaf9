#include "harness/suite/manifest_reader.hxx"

#include "harness/core/error.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/readable_path.hxx"

#include <algorithm>
#include <fmt/format.h>

namespace harness::suite {

namespace fs = std::filesystem;
using nlohmann::json;

ManifestReader::ManifestReader(fs::path file, std::string text, std::string writer)
    : file_(std::move(file)), text_(std::move(text)), writer_(std::move(writer))
{
}

json ManifestReader::parse(const fs::path& file, const std::string& text, const std::string& writer)
{
    try {
        return json::parse(text);
    } catch (const json::parse_error& e) {
        const auto [line, column] = line_and_column(text, std::min<std::size_t>(e.byte, text.size()) - (e.byte > 0));
        throw InputError(file.string(), line, column, "", "not JSON: the manifest " + writer + " writes");
    }
}

void ManifestReader::fail(const std::string& field, const std::string& message) const
{
    // JSON keeps no positions once parsed: the line is that of the key's first appearance.
    const std::string key = field.substr(field.find_last_of('.') + 1);
    const std::size_t at = text_.find('"' + key.substr(0, key.find('[')) + '"');
    const int line = at == std::string::npos ? 0 : line_and_column(text_, at).first;
    throw InputError(file_.string(), line, 1, field, message);
}

const json& ManifestReader::member(const json& object, const std::string& field) const
{
    const std::string key = field.substr(field.find_last_of('.') + 1);
    if (!object.is_object() || !object.contains(key))
        fail(field, fmt::format("missing (the manifest {} writes has it)", writer_));
    return object.at(key);
}

std::string ManifestReader::text(const json& object, const std::string& field, std::size_t max_length) const
{
    const json& value = member(object, field);
    if (!value.is_string()) fail(field, "expected a string");
    const auto s = value.get<std::string>();
    if (s.empty() || s.size() > max_length) fail(field, fmt::format("expected 1 to {} characters", max_length));
    if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }))
        fail(field, "control characters are not allowed");
    return s;
}

std::int64_t ManifestReader::integer(const json& object, const std::string& field, std::int64_t low,
                                     std::int64_t high) const
{
    const json& value = member(object, field);
    if (!value.is_number_integer()) fail(field, "expected an integer");
    const auto v = value.get<std::int64_t>();
    if (v < low || v > high) fail(field, fmt::format("{} is outside {} to {}", v, low, high));
    return v;
}

bool ManifestReader::flag(const json& object, const std::string& field) const
{
    if (!object.contains(field.substr(field.find_last_of('.') + 1))) return false;
    const json& value = member(object, field);
    if (!value.is_boolean()) fail(field, "expected true or false");
    return value.get<bool>();
}

std::string ManifestReader::digest(const json& object, const std::string& field) const
{
    const std::string d = text(object, field, 64);
    if (d.size() != 64 ||
        !std::all_of(d.begin(), d.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
        fail(field, "expected a SHA-256 digest (64 lowercase hex digits)");
    return d;
}

fs::path ManifestReader::path(const json& object, const std::string& field, const fs::path& project) const
{
    const fs::path written = text(object, field, 400);
    if (written.is_absolute()) fail(field, "a path relative to the manifest's folder, not an absolute one");
    const PathCheck check = check_readable_file(file_.parent_path() / written, {{project}, {}});
    if (check.verdict == PathVerdict::outside)
        fail(field, fmt::format("'{}' leads out of the project {}", written.string(), project.string()));
    if (check.verdict == PathVerdict::in_git_folder || check.verdict == PathVerdict::hard_link)
        fail(field, fmt::format("'{}' {}", written.string(), path_refusal(check.verdict)));
    return check.resolved;
}

fs::path ManifestReader::file_beside(const json& object, const std::string& field, const std::string& extension,
                                     const fs::path& project) const
{
    const std::string name = text(object, field, 100);
    if (const std::string problem = name_problem(name); !problem.empty() || !name.ends_with(extension))
        fail(field, fmt::format("the name of a {} file beside the manifest", extension));
    const fs::path file = file_.parent_path() / name;
    // A committed link could name a file anywhere: the file read is the one inside the project.
    const PathCheck check = check_readable_file(file, {{project}, {}});
    if (check.verdict == PathVerdict::outside)
        fail(field, fmt::format("{} leads out of the project {} (through a symbolic link)", name, project.string()));
    if (check.verdict == PathVerdict::in_git_folder || check.verdict == PathVerdict::hard_link)
        fail(field, fmt::format("{} {}", name, path_refusal(check.verdict)));
    return file;
}

std::string ManifestReader::symbol(const json& object, const std::string& field) const
{
    const std::string s = text(object, field, 200);
    if (!std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }))
        fail(field, "a kernel symbol is letters, digits and '_'");
    return s;
}

} // namespace harness::suite
