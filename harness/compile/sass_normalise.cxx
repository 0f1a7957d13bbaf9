#include "harness/compile/sass_normalise.hxx"

#include "harness/compile/sass_classes.hxx"

#include <algorithm>
#include <array>
#include <cctype>
#include <fmt/format.h>

namespace harness::compile {

namespace {

bool is_word_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// The kind of a register token ("R12" -> "R", "UP3" -> "UP"), or empty for another word.
std::string_view register_kind(std::string_view word)
{
    static constexpr std::array<std::string_view, 5> kinds = {"UR", "UP", "R", "P", "B"};
    for (const auto kind : kinds) {
        if (!word.starts_with(kind) || word.size() == kind.size()) continue;
        const std::string_view number = word.substr(kind.size());
        if (number.find_first_not_of("0123456789") == std::string_view::npos) return kind;
        return {};
    }
    return {};
}

/// Opcodes whose immediate operand is a code address.
bool takes_code_address(std::string_view opcode)
{
    const std::string_view base = opcode.substr(0, opcode.find('.'));
    static constexpr std::array<std::string_view, 12> control = {"BRA",  "BRX", "JMP", "JMX",  "CALL", "CAL",
                                                                 "JCAL", "RET", "SSY", "BSSY", "PBK",  "PCNT"};
    return std::find(control.begin(), control.end(), base) != control.end();
}

/// `text` with every register renamed through `names` and, for control flow, every hex
/// immediate and label written as "<target>".
std::string rename(std::string_view text, std::map<std::string, std::string>& names, bool code_addresses)
{
    std::string out;
    for (std::size_t k = 0; k < text.size();) {
        const char c = text[k];
        // A label of nvdisasm's: `.L_x_12`, in `(...)` after a backtick.
        if (c == '.' && text.substr(k).starts_with(".L_")) {
            std::size_t end = k + 3;
            while (end < text.size() && is_word_char(text[end])) ++end;
            out += "<target>";
            k = end;
            continue;
        }
        if (!is_word_char(c)) {
            out += c;
            ++k;
            continue;
        }
        std::size_t end = k;
        while (end < text.size() && is_word_char(text[end])) ++end;
        const std::string_view word = text.substr(k, end - k);
        // A word inside another (`SR_TID.X`, `desc[UR4]` is fine: `[` breaks words): only a word
        // that starts after a non-word character that is not '.' is a register.
        const bool after_dot = k > 0 && text[k - 1] == '.';
        if (const auto kind = register_kind(word); !kind.empty() && !after_dot) {
            auto [it, added] = names.try_emplace(std::string(word), "");
            if (added) {
                std::size_t used = 0;
                for (const auto& [from, to] : names)
                    if (!to.empty() && register_kind(from) == kind) ++used;
                std::string lower(kind);
                for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
                it->second = fmt::format("{}{}", lower, used);
            }
            out += it->second;
        } else if (code_addresses && word.starts_with("0x")) {
            out += "<target>";
        } else {
            out += word;
        }
        k = end;
    }
    return out;
}

} // namespace

std::string normalise_instruction(const SassInstruction& instruction, std::map<std::string, std::string>& names)
{
    std::string operands = instruction.operands;
    for (std::size_t at; (at = operands.find(".reuse")) != std::string::npos;) operands.erase(at, 6);
    // The code file separates fields with tabs: one inside an operand list is a space.
    std::replace(operands.begin(), operands.end(), '\t', ' ');
    std::string text;
    if (!instruction.predicate.empty()) {
        text = rename(instruction.predicate, names, false);
        text += ' ';
    }
    text += instruction.opcode;
    if (!operands.empty()) {
        text += ' ';
        text += rename(operands, names, takes_code_address(instruction.opcode));
    }
    return text;
}

SassKernelCode normalise_sass(const SassFunction& function)
{
    SassKernelCode code;
    code.kernel = function.name;
    std::map<std::string, std::string> names;
    for (const auto& i : function.instructions) {
        if (is_nop(i.opcode)) continue;
        code.instructions.push_back({i.file, i.line, normalise_instruction(i, names)});
    }
    return code;
}

} // namespace harness::compile
