#include "findings.hxx"

#include "rules.hxx"

#include <fmt/format.h>
#include <fstream>

namespace harness::fuzz {

namespace fs = std::filesystem;

const char* finding_kind_name(FindingKind kind)
{
    switch (kind) {
    case FindingKind::exception: return "exception";
    case FindingKind::rule: return "rule";
    case FindingKind::crash: return "crash";
    case FindingKind::sanitizer: return "sanitizer";
    case FindingKind::hang: return "hang";
    case FindingKind::memory: return "memory";
    }
    return "?";
}

std::string message_signature(std::string_view message)
{
    std::string out;
    std::size_t i = 0;
    // nlohmann's "[json.exception.type_error.302]" names the defect by its number: keep it whole.
    if (message.starts_with("[json.exception.")) {
        i = std::min(message.find(']'), message.size());
        out = message.substr(0, i);
    }
    // Quoted values ('...') and paths ([...] in std::filesystem_error) change from input to input.
    char closing = 0;
    for (; i < message.size() && out.size() < 160; ++i) {
        const char c = message[i];
        if (closing) {
            if (c == closing) closing = 0;
        } else if (c == '\'' || c == '[') {
            closing = c == '[' ? ']' : '\'';
            out += c == '[' ? "[...]" : "'...'";
        } else if (std::isdigit(static_cast<unsigned char>(c))) {
            if (out.empty() || out.back() != '#') out += '#';
        } else {
            out += c;
        }
    }
    return excerpt(out, 160);
}

std::string source_frame(std::string_view log)
{
    const std::string sources = HARNESS_SOURCE_DIR "/";
    for (std::size_t at = log.find(sources + "harness/"); at != std::string_view::npos;) {
        // "<sources>/harness/suite/expression.cxx:123:9", without the column.
        std::string_view where = log.substr(at + sources.size());
        where = where.substr(0, where.find_first_of(" \t\n)"));
        const auto first_colon = where.find(':');
        if (first_colon == std::string_view::npos) {
            at = log.find(sources + "harness/", at + 1);
            continue;
        }
        return std::string(where.substr(0, where.find(':', first_colon + 1)));
    }
    return "";
}

std::string log_signature(std::string_view log)
{
    // The sanitizers' own names for the error: UBSan's message, else the summary line
    // ("SUMMARY: AddressSanitizer: stack-overflow /path:12 in f"), else the error line.
    const auto tool_and_type = [](std::string_view rest) {
        return std::string(rest.substr(0, rest.find(' ', rest.find(' ') + 1)));
    };
    std::string undefined, summary, error, signal;
    for (std::size_t begin = 0; begin < log.size();) {
        std::size_t end = log.find('\n', begin);
        if (end == std::string_view::npos) end = log.size();
        const std::string_view line = log.substr(begin, end - begin);
        begin = end + 1;
        if (const auto at = line.find("runtime error: "); at != std::string_view::npos && undefined.empty())
            undefined = "UndefinedBehaviorSanitizer: " + message_signature(line.substr(at + 15));
        else if (line.find("byte(s) leaked") != std::string_view::npos)
            summary = "LeakSanitizer: memory leak";
        else if (const auto at = line.find("SUMMARY: "); at != std::string_view::npos && summary.empty())
            summary = tool_and_type(line.substr(at + 9));
        else if (const auto at = line.find("ERROR: ");
                 at != std::string_view::npos && error.empty() && line.find("Sanitizer", at) != std::string_view::npos)
            error = tool_and_type(line.substr(at + 7));
        else if (line.starts_with("harness_fuzz: signal ") && signal.empty())
            signal = std::string(line.substr(14));
    }
    std::string type = !undefined.empty() ? undefined
                       : !summary.empty() ? summary
                       : !error.empty()   ? error
                       : !signal.empty()  ? signal
                                          : "no report";
    const std::string frame = source_frame(log);
    return frame.empty() ? type : type + " at " + frame;
}

std::uint64_t finding_hash(const Target& target, const Finding& finding)
{
    std::uint64_t h = 0xcbf29ce484222325ULL;
    const auto mix = [&](std::string_view text) {
        for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ULL;
        h = (h ^ 0xff) * 0x100000001b3ULL;
    };
    mix(target.name);
    mix(finding_kind_name(finding.kind));
    mix(finding.signature);
    return h;
}

fs::path FindingStore::save(const Target& target, const Finding& finding, const std::string& input,
                            const InputContext& context, const std::string& origin) const
{
    const std::string stem =
        fmt::format("{}-{}-{:08x}", target.name, finding_kind_name(finding.kind), finding_hash(target, finding) >> 32);
    // A baseline is read under <suite>/<key>.csv, so it is saved under the same two names.
    fs::path input_path = folder_ / (stem + target.extension);
    if (target.keeps_seed_path) {
        const fs::path seed = context.seed_name;
        input_path = folder_ / stem / seed.parent_path().filename() / seed.filename();
    }
    std::error_code ignored;
    if (fs::exists(input_path, ignored) && fs::file_size(input_path, ignored) <= input.size()) return input_path;
    fs::create_directories(input_path.parent_path(), ignored);
    std::ofstream(input_path, std::ios::binary | std::ios::trunc) << input;
    std::ofstream(folder_ / (stem + ".txt"), std::ios::trunc)
        << fmt::format("target:    {} ({})\nkind:      {}\nsignature: {}\ninput:     {} ({} bytes)\norigin:    {}\n"
                       "replay:    harness_fuzz --target {} {}\n\n{}\n",
                       target.name, target.description, finding_kind_name(finding.kind), finding.signature,
                       input_path.string(), input.size(), origin, target.name, input_path.string(), finding.report);
    return input_path;
}

} // namespace harness::fuzz
