#include "harness/core/sass_code.hxx"

#include "harness/core/error.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <fmt/format.h>
#include <set>
#include <xxhash.h>
#include <zlib.h>

namespace harness {

namespace {

constexpr std::string_view marker = "# harness sass code";

/// A field of the file: no tab, newline or carriage return may be in it.
void check_field(std::string_view text, std::string_view what)
{
    if (text.find_first_of("\t\r\n") != std::string_view::npos)
        throw Error(ErrorKind::bad_input, fmt::format("the SASS code's {} \"{}\" holds a tab or a line break", what,
                                                      escape_control_characters(text.substr(0, 80))));
}

std::string case_code_text(const SassCaseCode& code)
{
    return code.hash.empty() ? "-\t-" : fmt::format("{}\t{}", code.hash, join(code.kernels, ","));
}

std::vector<std::string> split(std::string_view text, char separator)
{
    std::vector<std::string> parts;
    for (;;) {
        const auto at = text.find(separator);
        parts.emplace_back(text.substr(0, at));
        if (at == std::string_view::npos) return parts;
        text.remove_prefix(at + 1);
    }
}

bool is_hash(std::string_view text)
{
    return text.size() == 16 && text.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

SassCaseCode parse_case_code(const std::string& hash, const std::string& kernels, const std::string& name, int line,
                             int column)
{
    if (hash == "-") {
        if (kernels != "-") throw InputError(name, line, column + 1, "kernels", "kernels without a hash");
        return {};
    }
    if (!is_hash(hash)) throw InputError(name, line, column, "hash", fmt::format("\"{}\" is not a hash", hash));
    SassCaseCode code{hash, {}};
    if (kernels.empty()) return code;
    for (auto& k : split(kernels, ',')) {
        if (!is_hash(k))
            throw InputError(name, line, column + 1, "kernels",
                             fmt::format("\"{}\" is not a kernel id", escape_control_characters(k.substr(0, 40))));
        code.kernels.push_back(std::move(k));
    }
    return code;
}

} // namespace

std::string sass_hash(const std::vector<std::string>& parts)
{
    XXH3_state_t* state = XXH3_createState();
    XXH3_64bits_reset(state);
    for (const auto& p : parts) {
        const std::uint64_t size = p.size();
        XXH3_64bits_update(state, &size, sizeof size);
        XXH3_64bits_update(state, p.data(), p.size());
    }
    const std::uint64_t hash = XXH3_64bits_digest(state);
    XXH3_freeState(state);
    return fmt::format("{:016x}", hash);
}

std::string SassKernelCode::id() const
{
    std::vector<std::string> parts = {kernel};
    for (const auto& i : instructions) parts.push_back(fmt::format("{}\t{}\t{}", i.file, i.line, i.text));
    return sass_hash(parts);
}

std::string SassCodeFile::add_kernel(SassKernelCode code)
{
    std::string id = code.id();
    kernels.try_emplace(id, std::move(code));
    return id;
}

void SassCodeFile::drop_unused_kernels()
{
    std::set<std::string> used;
    for (const auto& [key, codes] : cases) {
        used.insert(codes.first.kernels.begin(), codes.first.kernels.end());
        used.insert(codes.second.kernels.begin(), codes.second.kernels.end());
    }
    std::erase_if(kernels, [&](const auto& entry) { return !used.contains(entry.first); });
}

const SassKernelCode* SassCodeFile::kernel(const std::string& id) const
{
    const auto it = kernels.find(id);
    return it == kernels.end() ? nullptr : &it->second;
}

std::string sass_code_text(const SassCodeFile& file)
{
    check_field(file.suite, "suite");
    check_field(file.arch, "architecture");
    std::string out = fmt::format("{}\n# suite: {}\n# arch: {}\n", marker, file.suite, file.arch);
    for (const auto& [key, codes] : file.cases) {
        check_field(key.first, "variant");
        check_field(key.second, "parameters");
        out += fmt::format("case\t{}\t{}\t{}\t{}\n", key.first, key.second, case_code_text(codes.first),
                           case_code_text(codes.second));
    }
    for (const auto& [id, code] : file.kernels) {
        check_field(code.kernel, "kernel name");
        out += fmt::format("kernel\t{}\t{}\n", id, code.kernel);
        std::string file_at;
        int line_at = -1;
        for (const auto& i : code.instructions) {
            if (i.file != file_at || i.line != line_at) {
                check_field(i.file, "file");
                out += fmt::format("at\t{}\t{}\n", i.file, i.line);
                file_at = i.file;
                line_at = i.line;
            }
            check_field(i.text, "instruction");
            out += fmt::format("\t{}\n", i.text);
        }
    }
    return out;
}

SassCodeFile parse_sass_code(std::string_view text, const std::string& name)
{
    SassCodeFile file;
    SassKernelCode* kernel = nullptr;
    std::string file_at;
    int line_at = 0;
    bool located = false;
    int number = 0;
    for (std::string_view rest = text; !rest.empty();) {
        const auto newline = rest.find('\n');
        const std::string_view line = rest.substr(0, newline);
        rest = newline == std::string_view::npos ? std::string_view{} : rest.substr(newline + 1);
        ++number;
        if (number == 1) {
            if (line != marker)
                throw InputError(name, 1, 1, "header", fmt::format("not a SASS code file (no \"{}\" line)", marker));
            continue;
        }
        if (line.starts_with("# suite: ")) {
            file.suite = std::string(line.substr(9));
            continue;
        }
        if (line.starts_with("# arch: ")) {
            file.arch = std::string(line.substr(8));
            continue;
        }
        if (line.empty() || line.starts_with("#")) continue;
        if (line.starts_with('\t')) {
            if (!kernel || !located) throw InputError(name, number, 1, "instruction", "an instruction outside a line");
            kernel->instructions.push_back({file_at, line_at, std::string(line.substr(1))});
            continue;
        }
        const auto fields = split(line, '\t');
        if (fields[0] == "case" && fields.size() == 7) {
            auto& codes = file.cases[{fields[1], fields[2]}];
            codes.first = parse_case_code(fields[3], fields[4], name, number, 4);
            codes.second = parse_case_code(fields[5], fields[6], name, number, 6);
        } else if (fields[0] == "kernel" && fields.size() == 3) {
            if (!is_hash(fields[1]))
                throw InputError(
                    name, number, 2, "id",
                    fmt::format("\"{}\" is not a kernel id", escape_control_characters(fields[1].substr(0, 40))));
            kernel = &file.kernels[fields[1]];
            kernel->kernel = fields[2];
            located = false;
        } else if (fields[0] == "at" && fields.size() == 3) {
            const auto n = parse_decimal_integer(fields[2]);
            if (!n || *n < 0 || *n > 100'000'000)
                throw InputError(name, number, 3, "line",
                                 fmt::format("\"{}\" is not a line number", escape_control_characters(fields[2])));
            if (!kernel) throw InputError(name, number, 1, "at", "a line outside a kernel");
            file_at = fields[1];
            line_at = static_cast<int>(*n);
            located = true;
        } else {
            throw InputError(name, number, 1, "record",
                             fmt::format("\"{}\" is not a case, kernel, at or instruction line",
                                         escape_control_characters(line.substr(0, 60))));
        }
    }
    if (number == 0) throw InputError(name, 1, 1, "header", "empty file");
    for (const auto& [key, codes] : file.cases)
        for (const auto* side : {&codes.first, &codes.second})
            for (const auto& id : side->kernels)
                if (!file.kernels.contains(id))
                    throw InputError(name, 0, 0, "kernels",
                                     fmt::format("case {} {} names kernel {}, which the file does not hold", key.first,
                                                 key.second, id));
    return file;
}

std::string gzip_text(std::string_view data)
{
    z_stream stream{};
    // windowBits 15 + 16: a gzip header, which zlib writes without a time or a name.
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) != Z_OK)
        throw Error(ErrorKind::environment, "zlib: deflateInit2 failed");
    std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    const int status = deflate(&stream, Z_FINISH);
    out.resize(stream.total_out);
    deflateEnd(&stream);
    if (status != Z_STREAM_END) throw Error(ErrorKind::environment, "zlib: deflate did not finish");
    return out;
}

std::string gunzip_text(std::string_view data, const std::string& name, std::size_t max_bytes)
{
    z_stream stream{};
    if (inflateInit2(&stream, 15 + 16) != Z_OK) throw Error(ErrorKind::environment, "zlib: inflateInit2 failed");
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    stream.avail_in = static_cast<uInt>(data.size());
    std::string out;
    std::string buffer(1 << 16, '\0');
    int status = Z_OK;
    while (status == Z_OK) {
        stream.next_out = reinterpret_cast<Bytef*>(buffer.data());
        stream.avail_out = static_cast<uInt>(buffer.size());
        status = inflate(&stream, Z_NO_FLUSH);
        out.append(buffer.data(), buffer.size() - stream.avail_out);
        if (out.size() > max_bytes) status = Z_MEM_ERROR;
        if (status == Z_BUF_ERROR && stream.avail_in == 0) break;
    }
    inflateEnd(&stream);
    if (status != Z_STREAM_END)
        throw Error(ErrorKind::bad_input,
                    fmt::format("{}: not gzip data{}", name,
                                out.size() > max_bytes ? fmt::format(" (inflates past {} MiB)", max_bytes >> 20)
                                                       : " or cut short"));
    return out;
}

} // namespace harness
