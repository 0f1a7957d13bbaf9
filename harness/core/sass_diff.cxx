// The diff of two versions of a kernel's normalised SASS, by source line (sass_code.hxx).

#include "harness/core/sass_code.hxx"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace harness {

namespace {

/// `text` with each renamed register (r12, ur3, p0, up1, b0) written as its kind alone: an
/// instruction that only another register allocation changed compares equal.
std::string without_registers(std::string_view text)
{
    std::string out;
    for (std::size_t k = 0; k < text.size();) {
        if (!std::islower(static_cast<unsigned char>(text[k])) ||
            (k > 0 &&
             (std::isalnum(static_cast<unsigned char>(text[k - 1])) || text[k - 1] == '_' || text[k - 1] == '.'))) {
            out += text[k++];
            continue;
        }
        std::size_t end = k;
        while (end < text.size() && std::islower(static_cast<unsigned char>(text[end]))) ++end;
        const std::string_view kind = text.substr(k, end - k);
        std::size_t digits = end;
        while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
        const bool word_ends =
            digits == text.size() || !(std::isalnum(static_cast<unsigned char>(text[digits])) || text[digits] == '_');
        if ((kind == "r" || kind == "ur" || kind == "p" || kind == "up" || kind == "b") && digits > end && word_ends) {
            out += kind;
            k = digits;
        } else {
            out += text.substr(k, end - k);
            k = end;
        }
    }
    return out;
}

/// The instructions of one source line, in program order, and what they are compared by.
struct LineGroup {
    std::string file;
    int line = 0;
    std::vector<std::string> texts;
    std::vector<std::string> keys; ///< without_registers(texts)
    bool operator==(const LineGroup& o) const { return file == o.file && keys == o.keys; }
};

std::vector<LineGroup> line_groups(const SassKernelCode& code)
{
    std::map<std::pair<std::string, int>, std::vector<std::string>> by_line;
    for (const auto& i : code.instructions) by_line[{i.file, i.line}].push_back(i.text);
    std::vector<LineGroup> groups;
    for (auto& [at, texts] : by_line) {
        std::vector<std::string> keys;
        for (const auto& t : texts) keys.push_back(without_registers(t));
        groups.push_back({at.first, at.second, std::move(texts), std::move(keys)});
    }
    return groups;
}

/// Index pairs of a longest common subsequence of `a` and `b` under `equal`; none when the table
/// would be too large (everything then differs).
template <class T, class Equal>
std::vector<std::pair<std::size_t, std::size_t>> common_subsequence(const std::vector<T>& a, const std::vector<T>& b,
                                                                    Equal equal)
{
    const std::size_t n = a.size(), m = b.size();
    if (n * m > 4'000'000) return {};
    std::vector<std::vector<std::uint32_t>> longest(n + 1, std::vector<std::uint32_t>(m + 1, 0));
    for (std::size_t i = n; i-- > 0;)
        for (std::size_t j = m; j-- > 0;)
            longest[i][j] =
                equal(a[i], b[j]) ? longest[i + 1][j + 1] + 1 : std::max(longest[i + 1][j], longest[i][j + 1]);
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0, j = 0; i < n && j < m;) {
        if (equal(a[i], b[j])) {
            pairs.emplace_back(i++, j++);
        } else if (longest[i + 1][j] >= longest[i][j + 1]) {
            ++i;
        } else {
            ++j;
        }
    }
    return pairs;
}

/// The instruction-level diff of one line: changed instructions with up to two equal ones around
/// them, longer equal runs shown as their count. Instructions are compared without their
/// registers' numbers (`keys`), shown as they are.
std::vector<std::string> line_diff(const LineGroup& was, const LineGroup& now)
{
    const std::vector<std::string>&before = was.texts, &after = now.texts;
    std::vector<std::string> raw;
    std::size_t i = 0, j = 0;
    auto pairs = common_subsequence(was.keys, now.keys, std::equal_to<>{});
    pairs.emplace_back(before.size(), after.size());
    for (const auto& [mi, mj] : pairs) {
        for (; i < mi; ++i) raw.push_back("-" + before[i]);
        for (; j < mj; ++j) raw.push_back("+" + after[j]);
        if (mj < after.size()) raw.push_back(" " + after[mj]);
        i = mi + 1;
        j = mj + 1;
    }
    constexpr std::size_t context = 2;
    std::vector<std::string> out;
    for (std::size_t k = 0; k < raw.size();) {
        if (raw[k][0] != ' ') {
            out.push_back(raw[k++]);
            continue;
        }
        std::size_t end = k;
        while (end < raw.size() && raw[end][0] == ' ') ++end;
        const std::size_t run = end - k;
        const bool first = out.empty(), last = end == raw.size();
        const std::size_t keep_head = first ? 0 : context, keep_tail = last ? 0 : context;
        if (run <= keep_head + keep_tail + 1) {
            for (; k < end; ++k) out.push_back(raw[k]);
            continue;
        }
        for (std::size_t c = 0; c < keep_head; ++c) out.push_back(raw[k + c]);
        out.push_back(fmt::format(" ... {} equal instructions", run - keep_head - keep_tail));
        for (std::size_t c = run - keep_tail; c < run; ++c) out.push_back(raw[k + c]);
        k = end;
    }
    return out;
}

SassDiffHunk hunk_of(const std::string& kernel, const LineGroup* before, const LineGroup* after)
{
    SassDiffHunk h;
    h.kernel = kernel;
    h.file = after ? after->file : before->file;
    h.baseline_line = before ? before->line : 0;
    h.current_line = after ? after->line : 0;
    static const LineGroup none;
    h.lines = line_diff(before ? *before : none, after ? *after : none);
    return h;
}

/// The opcode of a diff line ("-@p0 LDG.E r3, ..." -> "LDG.E").
std::string_view line_opcode(std::string_view l)
{
    std::string_view text = l.substr(1);
    if (text.starts_with('@')) text.remove_prefix(std::min(text.size(), text.find(' ') + 1));
    return text.substr(0, text.find(' '));
}

/// Whether a diff line is an instruction gone or new, not an equal one or a count of them.
bool is_change(const std::string& l)
{
    return !l.empty() && (l[0] == '-' || l[0] == '+');
}

/// What a hunk changed, by opcode, net: the opcodes in `rank` order, the largest moves first among
/// equals; opcodes that balance (registers or operands changed) left out.
std::vector<std::pair<std::string, int>> opcode_moves(const std::vector<std::string>& lines, const SassOpcodeRank& rank)
{
    std::map<std::string, int> moved;
    for (const auto& l : lines)
        if (is_change(l)) moved[std::string(line_opcode(l))] += l[0] == '+' ? 1 : -1;
    std::vector<std::pair<std::string, int>> net;
    for (const auto& [opcode, n] : moved)
        if (n != 0) net.emplace_back(opcode, n);
    std::stable_sort(net.begin(), net.end(), [&](const auto& a, const auto& b) {
        const int ra = rank ? rank(a.first) : 0, rb = rank ? rank(b.first) : 0;
        return ra != rb ? ra < rb : std::abs(a.second) > std::abs(b.second);
    });
    return net;
}

/// How many of a hunk's moved opcodes its header names.
constexpr std::size_t header_opcodes = 4;

/// "LDG.E.128.CONSTANT -4, LDG.E.CONSTANT +16", four at most; "" when nothing moved.
std::string moves_text(const std::vector<std::pair<std::string, int>>& net)
{
    std::string out;
    for (std::size_t k = 0; k < net.size() && k < header_opcodes; ++k)
        out += fmt::format("{}{} {:+d}", out.empty() ? "" : ", ", net[k].first, net[k].second);
    if (net.size() > header_opcodes) out += fmt::format(", {} more opcodes", net.size() - header_opcodes);
    return out;
}

std::string hunk_header(const SassDiffHunk& h, const SassOpcodeRank& rank)
{
    std::string out = fmt::format("@@ {} {}", h.kernel, h.location());
    if (h.baseline_line && h.current_line && h.baseline_line != h.current_line)
        out += fmt::format(" (baseline line {})", h.baseline_line);
    else if (!h.current_line)
        out += " (gone)";
    else if (!h.baseline_line)
        out += " (new)";
    out += " @@";
    if (const std::string moves = moves_text(opcode_moves(h.lines, rank)); !moves.empty()) out += " " + moves;
    return out;
}

/// A case's hunks, those at `first_locations` first, and notes for kernels on one side only.
std::vector<SassDiffHunk> ordered_hunks(const std::vector<const SassKernelCode*>& baseline,
                                        const std::vector<const SassKernelCode*>& current,
                                        const std::vector<std::string>& first_locations,
                                        std::vector<std::string>& notes)
{
    std::vector<SassDiffHunk> hunks;
    for (const SassKernelCode* now : current) {
        const auto was = std::find_if(baseline.begin(), baseline.end(),
                                      [&](const SassKernelCode* k) { return k->kernel == now->kernel; });
        if (was == baseline.end()) {
            notes.push_back(fmt::format("kernel {}: not in the baseline's SASS", now->kernel));
            continue;
        }
        for (auto& h : diff_sass(**was, *now)) hunks.push_back(std::move(h));
    }
    for (const SassKernelCode* was : baseline)
        if (std::none_of(current.begin(), current.end(),
                         [&](const SassKernelCode* k) { return k->kernel == was->kernel; }))
            notes.push_back(fmt::format("kernel {}: no longer launched", was->kernel));
    // The hunk at each failing verdict's line first: the one at that line, else the nearest one of
    // its file.
    std::vector<SassDiffHunk> ordered;
    for (const auto& location : first_locations) {
        const auto colon = location.rfind(':');
        if (colon == std::string::npos) continue;
        const std::string file = location.substr(0, colon);
        const int line = std::atoi(location.c_str() + colon + 1);
        auto best = hunks.end();
        for (auto h = hunks.begin(); h != hunks.end(); ++h) {
            if (h->file != file) continue;
            const int at = h->current_line ? h->current_line : h->baseline_line;
            if (best == hunks.end() ||
                std::abs(at - line) < std::abs((best->current_line ? best->current_line : best->baseline_line) - line))
                best = h;
        }
        if (best == hunks.end()) continue;
        ordered.push_back(std::move(*best));
        hunks.erase(best);
    }
    for (auto& h : hunks) ordered.push_back(std::move(h));
    return ordered;
}

/// The lines of `h` an excerpt of `budget` instruction lines shows, by index: one changed line of
/// each opcode the header names in turn, in the direction it moved, then the other changed lines.
std::vector<bool> excerpt_lines(const SassDiffHunk& h, std::size_t budget, const SassOpcodeRank& rank)
{
    const auto net = opcode_moves(h.lines, rank);
    std::vector<bool> shown(h.lines.size(), false);
    std::size_t taken = 0;
    std::vector<std::size_t> next(std::min(net.size(), header_opcodes), 0); // where each opcode's search resumes
    for (bool progress = true; progress && taken < budget;) {
        progress = false;
        for (std::size_t k = 0; k < next.size() && taken < budget; ++k) {
            const char sign = net[k].second > 0 ? '+' : '-';
            for (; next[k] < h.lines.size(); ++next[k]) {
                const std::string& l = h.lines[next[k]];
                if (shown[next[k]] || !is_change(l) || l[0] != sign || line_opcode(l) != net[k].first) continue;
                shown[next[k]++] = true;
                ++taken;
                progress = true;
                break;
            }
        }
    }
    for (std::size_t i = 0; i < h.lines.size() && taken < budget; ++i)
        if (!shown[i] && is_change(h.lines[i])) {
            shown[i] = true;
            ++taken;
        }
    return shown;
}

} // namespace

std::string SassDiffHunk::location() const
{
    return fmt::format("{}:{}", file, current_line ? current_line : baseline_line);
}

std::vector<SassDiffHunk> diff_sass(const SassKernelCode& baseline, const SassKernelCode& current)
{
    const std::vector<LineGroup> before = line_groups(baseline), after = line_groups(current);
    auto anchors = common_subsequence(before, after, std::equal_to<>{});
    anchors.emplace_back(before.size(), after.size());
    std::vector<SassDiffHunk> hunks;
    std::size_t i = 0, j = 0;
    for (const auto& [mi, mj] : anchors) {
        // Between two matched lines: the k-th changed line of each side pair up where their files
        // agree; the rest are gone or new.
        for (; i < mi || j < mj;) {
            const LineGroup* b = i < mi ? &before[i] : nullptr;
            const LineGroup* a = j < mj ? &after[j] : nullptr;
            if (b && a && b->file != a->file) a->file < b->file ? b = nullptr : a = nullptr;
            hunks.push_back(hunk_of(current.kernel, b, a));
            if (b) ++i;
            if (a) ++j;
        }
        i = mi + 1;
        j = mj + 1;
    }
    return hunks;
}

std::string sass_diff_text(const std::vector<const SassKernelCode*>& baseline,
                           const std::vector<const SassKernelCode*>& current,
                           const std::vector<std::string>& first_locations, const SassOpcodeRank& rank)
{
    std::vector<std::string> notes;
    const std::vector<SassDiffHunk> hunks = ordered_hunks(baseline, current, first_locations, notes);
    std::string out;
    for (const auto& note : notes) out += note + "\n";
    for (const auto& h : hunks) {
        out += hunk_header(h, rank) + "\n";
        for (const auto& l : h.lines) out += l + "\n";
    }
    return out;
}

std::string sass_diff_excerpt(const std::vector<const SassKernelCode*>& baseline,
                              const std::vector<const SassKernelCode*>& current,
                              const std::vector<std::string>& first_locations, std::size_t max_lines,
                              const SassOpcodeRank& rank)
{
    std::vector<std::string> notes;
    const std::vector<SassDiffHunk> hunks = ordered_hunks(baseline, current, first_locations, notes);
    std::string out;
    std::size_t lines = 0;
    for (const auto& note : notes)
        if (lines < max_lines) {
            out += note + "\n";
            ++lines;
        }
    if (hunks.empty() || lines >= max_lines) return out;
    const SassDiffHunk& lead = hunks.front();
    out += hunk_header(lead, rank) + "\n";
    const std::vector<bool> shown = excerpt_lines(lead, max_lines - lines - 1, rank);
    bool any = false, skipped = false;
    for (std::size_t i = 0; i < lead.lines.size(); ++i) {
        if (!shown[i]) {
            skipped = true;
            continue;
        }
        if (any && skipped) out += " ...\n";
        any = true;
        skipped = false;
        out += lead.lines[i] + "\n";
    }
    return out;
}

} // namespace harness
