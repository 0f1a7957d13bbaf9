#include "harness/compare/baseline_file.hxx"

#include "harness/core/atomic_file.hxx"
#include "harness/core/error.hxx"
#include "harness/core/file_transaction.hxx"
#include "harness/core/input_files.hxx"
#include "harness/core/text.hxx"

#include <algorithm>
#include <cmath>
#include <csv.h>
#include <fmt/format.h>
#include <map>
#include <regex>
#include <sstream>
#include <tuple>

namespace harness::compare {

namespace {

constexpr const char* figure_marker = "# harness baseline";
const std::vector<std::string> figure_columns = {"variant", "params", "metric", "value", "samples", "source"};

std::string field(std::string_view text)
{
    std::string out(csv_write(nullptr, 0, text.data(), text.size()), '\0');
    csv_write(out.data(), out.size(), text.data(), text.size());
    return out;
}

std::string row_text(const std::vector<std::string>& fields)
{
    std::string row;
    for (const auto& f : fields) {
        if (!row.empty()) row += ',';
        row += field(f);
    }
    return row + "\n";
}

/// The CSV part of a file parsed with libcsv: records of fields, each with its line number.
struct Records {
    std::vector<std::vector<std::string>> rows;
    std::vector<int> lines;
    int line = 1;
    int newlines_in_row = 0; ///< a quoted field may hold line breaks: the next record starts lower
    bool row_open = false;
};

/// "baseline" for "# harness baseline": what a file of that first line is, for messages.
std::string_view kind_of(std::string_view marker)
{
    constexpr std::string_view tool = "# harness ";
    return marker.starts_with(tool) ? marker.substr(tool.size()) : marker;
}

/// `text` for a message: whole when short, else its start and its length (a 10 MB cell must not
/// become 10 MB of console output).
std::string shortened(std::string_view text)
{
    constexpr std::size_t shown = 80;
    if (text.size() <= shown) return std::string(text);
    return fmt::format("{}... ({} bytes)", text.substr(0, shown), text.size());
}

double parse_double(const std::string& text, const std::string& name, int line, const std::string& what)
{
    if (const auto v = parse_decimal_number(text)) return *v;
    throw InputError(name, line, 1, what, fmt::format("'{}' is not a number", shortened(text)));
}

/// One text for a row's variant, params and metric, each told from the next by its length.
std::string row_key(const std::string& variant, const std::string& params, const std::string& metric)
{
    return fmt::format("{}:{}{}:{}{}", variant.size(), variant, params.size(), params, metric);
}

} // namespace

std::string number_text(double v)
{
    return fmt::format("{}", v);
}

std::string BaselineHeader::meta(const std::string& name) const
{
    for (const auto& [k, v] : metadata)
        if (k == name) return v;
    return "";
}

void BaselineHeader::set_identity(const std::string& suite, const std::string& key)
{
    set_meta("schema_version", std::to_string(baseline_schema_version));
    set_meta("suite", suite);
    set_meta("key", key);
}

void BaselineHeader::set_writer(const std::string& cuda, const std::string& harness, const std::string& git_revision,
                                const std::string& date)
{
    set_meta("cuda", cuda);
    set_meta("harness", harness);
    set_meta("git_revision", git_revision);
    set_meta("date", date);
}

void BaselineHeader::set_meta(const std::string& name, const std::string& value)
{
    const std::size_t bad_value = control_character_offset(value);
    if (name.empty() || name.find(':') != std::string::npos || control_character_offset(name) != std::string::npos ||
        bad_value != std::string::npos)
        throw Error(ErrorKind::bad_input,
                    fmt::format("baseline metadata '# {}: {}' would not be one line of the file's header{}",
                                name.substr(0, 100), value.substr(0, 200),
                                bad_value == std::string::npos
                                    ? ""
                                    : fmt::format(" (a control character at offset {} of the value)", bad_value)));
    for (auto& [k, v] : metadata)
        if (k == name) {
            v = value;
            return;
        }
    metadata.emplace_back(name, value);
}

const BaselineRow* BaselineFile::find(const std::string& variant, const std::string& params,
                                      const std::string& metric) const
{
    const auto is = [&](const BaselineRow& r) {
        return r.variant == variant && r.params == params && r.metric == metric;
    };
    if (indexed_ && indexed_rows_ == rows.size()) {
        const auto it = index_.find(row_key(variant, params, metric));
        if (it == index_.end()) return nullptr;
        if (is(rows[it->second])) return &rows[it->second];
    }
    const auto it = std::find_if(rows.begin(), rows.end(), is);
    return it == rows.end() ? nullptr : &*it;
}

void BaselineFile::index_rows()
{
    index_.clear();
    index_.reserve(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i)
        index_.emplace(row_key(rows[i].variant, rows[i].params, rows[i].metric), i);
    indexed_rows_ = rows.size();
    indexed_ = true;
}

std::string exact_baseline_key(const std::string& arch)
{
    return arch;
}

std::string noisy_baseline_key(const std::string& gpu_name)
{
    std::string key;
    for (char c : gpu_name) {
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
        if (keep)
            key += c;
        else if (!key.empty() && key.back() != '-')
            key += '-';
    }
    while (!key.empty() && key.back() == '-') key.pop_back();
    return key.empty() ? "unknown-gpu" : key;
}

std::filesystem::path baseline_path(const std::filesystem::path& dir, const std::string& suite, const std::string& key)
{
    return child_path(child_path(dir, suite, "suite name"), key, "baseline key", ".csv");
}

void check_baseline_identity(const BaselineHeader& file, const std::string& name, const std::string& suite,
                             const std::string& key)
{
    for (const auto& [field, expected] : {std::pair{"suite", suite}, std::pair{"key", key}}) {
        const std::string value = file.meta(field);
        if (!value.empty() && value != expected)
            throw InputError(name, 0, 0, std::string("# ") + field,
                             fmt::format("the file says {} '{}', but it is the baseline of {} '{}'; was it copied from "
                                         "elsewhere?",
                                         field, value.substr(0, max_name_length), field, expected));
    }
}

bool is_gpu_model_baseline(const std::filesystem::path& path)
{
    static const std::regex arch_key("sm_[0-9]+[a-z]?");
    const std::string stem = path.stem().string();
    return path.extension() == ".csv" && !std::regex_match(stem, arch_key) && !stem.ends_with(".cliffs") &&
           !stem.ends_with(".sass") && !stem.ends_with(".levels") && !stem.ends_with(".accesses");
}

std::string table_file_text(std::string_view marker, const BaselineHeader& header,
                            const std::vector<std::string>& columns, const std::vector<std::vector<std::string>>& rows)
{
    std::string out = std::string(marker) + "\n";
    for (const auto& [k, v] : header.metadata) out += fmt::format("# {}: {}\n", k, v);
    out += row_text(columns);
    for (const auto& r : rows) out += row_text(r);
    return out;
}

std::string baseline_text(const BaselineFile& file)
{
    std::vector<std::vector<std::string>> rows;
    for (const auto& r : file.rows) {
        std::string samples;
        for (double s : r.samples) {
            if (!samples.empty()) samples += ' ';
            samples += number_text(s);
        }
        rows.push_back({r.variant, r.params, r.metric, number_text(r.value), samples, r.source});
    }
    return table_file_text(figure_marker, file, figure_columns, rows);
}

TableRows parse_table_file(const std::string& text, const std::string& name, std::string_view marker,
                           const std::vector<std::string>& columns, BaselineHeader& file)
{
    if (const std::size_t bad = invalid_utf8_offset(text); bad != std::string::npos) {
        const auto [at_line, column] = line_and_column(text, bad);
        throw InputError(name, at_line, column, "", "the file is not UTF-8 text");
    }
    // A byte-order mark, as spreadsheets write "CSV UTF-8", is no part of the first line.
    std::size_t pos = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
    int line = 0;
    // Metadata: the comment lines before the table.
    while (pos < text.size() && text[pos] == '#') {
        ++line;
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        std::string comment = text.substr(pos, end - pos);
        if (!comment.empty() && comment.back() == '\r') comment.pop_back();
        pos = end + 1;
        if (line == 1) {
            if (comment != marker)
                throw InputError(name, 1, 1, "",
                                 fmt::format("not a {} file (first line is not '{}')", kind_of(marker), marker));
            continue;
        }
        const std::size_t colon = comment.find(':');
        if (colon == std::string::npos || comment.size() < 2 || comment[1] != ' ')
            throw InputError(name, line, 1, "", "a metadata line is '# name: value'");
        std::string value = comment.substr(colon + 1);
        if (!value.empty() && value.front() == ' ') value.erase(0, 1);
        const std::string key = comment.substr(2, colon - 2);
        for (const auto& [seen, _] : file.metadata)
            if (seen == key)
                throw InputError(name, line, 1, "# " + key.substr(0, 100), "given twice (which one holds?)");
        file.metadata.emplace_back(key, value);
    }
    if (line == 0)
        throw InputError(name, 1, 1, "",
                         fmt::format("not a {} file (first line is not '{}')", kind_of(marker), marker));
    const std::string version = file.meta("schema_version");
    if (version != std::to_string(baseline_schema_version))
        throw InputError(name, 0, 0, "schema_version",
                         fmt::format("baseline schema version '{}' (this harness reads version {}); record it again "
                                     "with `harness baseline update`",
                                     version, baseline_schema_version));

    Records records;
    records.line = line + 1;
    csv_parser parser;
    csv_init(&parser, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL);
    const auto on_field = [](void* s, size_t n, void* data) {
        auto* r = static_cast<Records*>(data);
        if (!r->row_open) {
            r->rows.emplace_back();
            r->lines.push_back(r->line);
            r->row_open = true;
        }
        r->rows.back().emplace_back(static_cast<char*>(s), n);
        r->newlines_in_row +=
            static_cast<int>(std::count(r->rows.back().back().begin(), r->rows.back().back().end(), '\n'));
    };
    const auto on_row = [](int, void* data) {
        auto* r = static_cast<Records*>(data);
        r->row_open = false;
        r->line += 1 + r->newlines_in_row;
        r->newlines_in_row = 0;
    };
    const std::string table = text.substr(std::min(pos, text.size()));
    const bool parsed = csv_parse(&parser, table.data(), table.size(), on_field, on_row, &records) == table.size() &&
                        csv_fini(&parser, on_field, on_row, &records) == 0;
    const std::string csv_problem = parsed ? "" : csv_strerror(csv_error(&parser));
    csv_free(&parser);
    if (!parsed) throw InputError(name, records.line, 1, "", "malformed CSV: " + csv_problem);
    if (records.rows.empty() || records.rows.front() != columns)
        throw InputError(name, line + 1, 1, "", fmt::format("expected the header '{}'", fmt::join(columns, ",")));
    TableRows out;
    for (std::size_t i = 1; i < records.rows.size(); ++i) {
        if (records.rows[i].size() != columns.size())
            throw InputError(name, records.lines[i], 1, "",
                             fmt::format("expected {} fields, found {}", columns.size(), records.rows[i].size()));
        out.rows.push_back(std::move(records.rows[i]));
        out.lines.push_back(records.lines[i]);
    }
    return out;
}

BaselineFile parse_baseline(const std::string& text, const std::string& name)
{
    BaselineFile file;
    const TableRows table = parse_table_file(text, name, figure_marker, figure_columns, file);
    std::map<std::tuple<std::string, std::string, std::string>, int> seen; // row -> line
    for (std::size_t i = 0; i < table.rows.size(); ++i) {
        const auto& f = table.rows[i];
        const int at = table.lines[i];
        BaselineRow r{f[0], f[1], f[2], parse_double(f[3], name, at, "value"), {}, f[5]};
        if (const auto [it, fresh] = seen.emplace(std::tuple{r.variant, r.params, r.metric}, at); !fresh)
            throw InputError(name, at, 1, "",
                             fmt::format("a second row for {} {} {} (the first is on line {})", shortened(r.variant),
                                         shortened(r.params), shortened(r.metric), it->second));
        std::istringstream samples(f[4]);
        for (std::string s; samples >> s;) r.samples.push_back(parse_double(s, name, at, "samples"));
        file.rows.push_back(std::move(r));
    }
    file.index_rows();
    return file;
}

std::string read_baseline_text(const std::filesystem::path& path, const char* what)
{
    // Under the folder's FolderLock or FolderReadLock no replacement is ever half done; a reader
    // without one must not take a half-done update for the baselines.
    if (replacement_pending(path.parent_path()))
        throw Error(ErrorKind::environment,
                    fmt::format("cannot read {}: an update of its folder was interrupted and is not complete yet; "
                                "the next `harness run` or `harness baseline update` of the suite completes it",
                                path.string()));
    return read_input_file(path, max_baseline_file_bytes, what);
}

BaselineFile read_baseline(const std::filesystem::path& path)
{
    return parse_baseline(read_baseline_text(path, "baseline file"), path.string());
}

void write_baseline(const std::filesystem::path& path, const BaselineFile& file)
{
    write_file_atomically(path, baseline_text(file));
}

} // namespace harness::compare
