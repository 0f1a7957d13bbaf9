#include "harness/analysis/ptx_module.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fmt/format.h>
#include <unordered_map>

namespace harness::analysis {

bool Instruction::has(std::string_view modifier) const
{
    return std::find(modifiers.begin(), modifiers.end(), modifier) != modifiers.end();
}

const PtxKernel* PtxModule::find(std::string_view name) const
{
    for (const auto& k : kernels)
        if (k.name == name) return &k;
    return nullptr;
}

std::string PtxModule::file_name(int number) const
{
    for (const auto& [n, path] : files)
        if (n == number) return path;
    return {};
}

namespace {

enum class TokenKind : std::uint8_t { word, number, string, punct, end };

struct Token {
    TokenKind kind = TokenKind::end;
    std::string_view text;
    int line = 0;
};

bool word_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' || c == '%' || c == '.';
}
bool word_char(char c)
{
    return word_start(c) || (c >= '0' && c <= '9');
}

/// Splits PTX into words (identifiers, directives, registers, dotted opcodes), numbers, strings
/// and single punctuation characters, each with its line.
class Tokenizer {
public:
    Tokenizer(std::string_view text, const std::string& origin) : text_(text), origin_(origin) {}

    /// The next token; TokenKind::end at the end of the text, and ever after.
    Token get()
    {
        skip_space();
        if (pos_ >= text_.size()) return {TokenKind::end, {}, line_};
        return next();
    }

private:
    void skip_space()
    {
        while (pos_ < text_.size()) {
            const char c = text_[pos_];
            if (c == '\n') {
                ++line_;
                ++pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (text_.substr(pos_, 2) == "//") {
                while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
            } else if (text_.substr(pos_, 2) == "/*") {
                const int start = line_;
                const auto close = text_.find("*/", pos_ + 2);
                if (close == std::string_view::npos)
                    throw Error(ErrorKind::bad_input,
                                fmt::format("{}:{}: PTX comment is never closed", origin_, start));
                line_ += static_cast<int>(std::count(text_.begin() + pos_, text_.begin() + close, '\n'));
                pos_ = close + 2;
            } else {
                break;
            }
        }
    }

    Token next()
    {
        const std::size_t start = pos_;
        const char c = text_[pos_];
        if (c == '"') {
            const auto close = text_.find('"', pos_ + 1);
            if (close == std::string_view::npos ||
                text_.substr(pos_, close - pos_).find('\n') != std::string_view::npos)
                throw Error(ErrorKind::bad_input, fmt::format("{}:{}: PTX string is never closed", origin_, line_));
            pos_ = close + 1;
            return {TokenKind::string, text_.substr(start + 1, close - start - 1), line_};
        }
        if (word_start(c)) {
            // Qualifiers such as ld.global.L1::no_allocate keep their "::" inside the word.
            while (pos_ < text_.size() &&
                   (word_char(text_[pos_]) ||
                    (text_.substr(pos_, 2) == "::" && pos_ + 2 < text_.size() && word_char(text_[pos_ + 2]))))
                pos_ += text_[pos_] == ':' ? 2 : 1;
            return {TokenKind::word, text_.substr(start, pos_ - start), line_};
        }
        if (c >= '0' && c <= '9') {
            while (pos_ < text_.size() && (word_char(text_[pos_]) && text_[pos_] != '%' && text_[pos_] != '$')) ++pos_;
            return {TokenKind::number, text_.substr(start, pos_ - start), line_};
        }
        if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
            throw Error(ErrorKind::bad_input,
                        fmt::format("{}:{}: byte 0x{:02x} is not PTX", origin_, line_, static_cast<unsigned char>(c)));
        ++pos_;
        return {TokenKind::punct, text_.substr(start, 1), line_};
    }

    std::string_view text_;
    const std::string& origin_;
    std::size_t pos_ = 0;
    int line_ = 1;
};

struct SpecialName {
    std::string_view name;
    SpecialRegister reg;
};

constexpr SpecialName special_names[] = {
    {"%tid.x", SpecialRegister::tid_x},       {"%tid.y", SpecialRegister::tid_y},
    {"%tid.z", SpecialRegister::tid_z},       {"%ntid.x", SpecialRegister::ntid_x},
    {"%ntid.y", SpecialRegister::ntid_y},     {"%ntid.z", SpecialRegister::ntid_z},
    {"%ctaid.x", SpecialRegister::ctaid_x},   {"%ctaid.y", SpecialRegister::ctaid_y},
    {"%ctaid.z", SpecialRegister::ctaid_z},   {"%nctaid.x", SpecialRegister::nctaid_x},
    {"%nctaid.y", SpecialRegister::nctaid_y}, {"%nctaid.z", SpecialRegister::nctaid_z},
    {"%laneid", SpecialRegister::laneid},     {"%warpid", SpecialRegister::warpid},
};

/// Special registers whose value the model does not know (clocks, SM ids, lane masks, ...).
bool is_other_special(std::string_view name)
{
    constexpr std::string_view prefixes[] = {"%tid",
                                             "%ntid",
                                             "%ctaid",
                                             "%nctaid",
                                             "%clock",
                                             "%smid",
                                             "%nsmid",
                                             "%gridid",
                                             "%lanemask",
                                             "%globaltimer",
                                             "%nwarpid",
                                             "%dynamic_smem_size",
                                             "%total_smem_size",
                                             "%aggr_smem_size",
                                             "%cluster",
                                             "%nclusterid",
                                             "%is_explicit_cluster",
                                             "%envreg",
                                             "%pm",
                                             "%reserved_smem"};
    for (const auto p : prefixes)
        if (name.starts_with(p)) return true;
    return false;
}

/// PTX integer and float literals: decimal, 0x hex, 0b binary, leading-0 octal, 0f/0d float bits,
/// a trailing U; a decimal float ("1.5") as double bits.
bool parse_number(std::string_view text, std::int64_t& value)
{
    if (!text.empty() && (text.back() == 'U' || text.back() == 'u')) text.remove_suffix(1);
    std::uint64_t bits = 0;
    int base = 10;
    if (text.size() > 2 && text[0] == '0' &&
        (text[1] == 'f' || text[1] == 'F' || text[1] == 'd' || text[1] == 'D' || text[1] == 'x' || text[1] == 'X')) {
        base = 16;
        text.remove_prefix(2);
    } else if (text.size() > 2 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B')) {
        base = 2;
        text.remove_prefix(2);
    } else if (text.find('.') != std::string_view::npos || text.find('e') != std::string_view::npos) {
        double d = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), d);
        if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return false;
        std::memcpy(&bits, &d, sizeof bits);
        value = static_cast<std::int64_t>(bits);
        return true;
    } else if (text.size() > 1 && text[0] == '0') {
        base = 8;
        text.remove_prefix(1);
    }
    const auto r = std::from_chars(text.data(), text.data() + text.size(), bits, base);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return false;
    value = static_cast<std::int64_t>(bits);
    return true;
}

std::uint32_t type_size(std::string_view type)
{
    if (type.size() < 2) return 0;
    if (type == "pred") return 1;
    int bits = 0;
    std::from_chars(type.data() + 1, type.data() + type.size(), bits);
    if (type.starts_with("bf16x2") || type.starts_with("f16x2")) return 4;
    if (type.starts_with("bf16")) return 2;
    return bits > 0 ? static_cast<std::uint32_t>(bits / 8) : 0;
}

/// Parses the statements of one PTX text.
class Parser {
public:
    Parser(std::string_view text, const std::string& origin, const PtxLimits& limits)
        : origin_(origin), limits_(limits), tokenizer_(text, origin)
    {
        if (text.size() > limits.max_bytes)
            throw Error(ErrorKind::bad_input, fmt::format("{}: PTX of {} bytes is over the limit of {} bytes", origin,
                                                          text.size(), limits.max_bytes));
        look_[0] = tokenizer_.get();
        look_[1] = tokenizer_.get();
        module_.origin = origin;
    }

    PtxModule run()
    {
        while (peek().kind != TokenKind::end) top_level();
        for (auto& k : module_.kernels)
            for (const auto& v : module_shared_) k.shared.push_back(v);
        return std::move(module_);
    }

private:
    [[noreturn]] void fail(const Token& at, const std::string& message) const
    {
        throw Error(ErrorKind::bad_input, fmt::format("{}:{}: {}", origin_, at.line, message));
    }
    const Token peek(std::size_t ahead = 0) const { return look_[ahead > 0 ? 1 : 0]; }
    Token take()
    {
        const Token t = look_[0];
        look_[0] = look_[1];
        look_[1] = tokenizer_.get();
        return t;
    }
    bool accept(std::string_view text)
    {
        if (peek().kind == TokenKind::end || peek().text != text) return false;
        take();
        return true;
    }
    void expect(std::string_view text)
    {
        if (!accept(text)) fail(peek(), fmt::format("expected '{}', found '{}'", text, describe(peek())));
    }
    static std::string describe(const Token& t)
    {
        return t.kind == TokenKind::end ? "the end of the text" : std::string(t.text.substr(0, 40));
    }
    void skip_statement()
    {
        while (peek().kind != TokenKind::end && peek().text != ";") take();
        expect(";");
    }
    void skip_line(int line)
    {
        while (peek().kind != TokenKind::end && peek().line == line && peek().text != "}") take();
    }
    std::uint64_t number(const std::string& what)
    {
        const Token t = take();
        std::int64_t v = 0;
        if (t.kind != TokenKind::number || !parse_number(t.text, v) || v < 0)
            fail(t, fmt::format("{}: expected a number, found '{}'", what, describe(t)));
        return static_cast<std::uint64_t>(v);
    }

    void top_level()
    {
        const Token t = peek();
        if (t.text == ".version" || t.text == ".target" || t.text == ".address_size") {
            take();
            skip_line(t.line);
        } else if (t.text == ".file") {
            file_directive();
        } else if (t.text == ".loc") {
            loc_directive();
        } else if (t.text == ".visible" || t.text == ".weak" || t.text == ".extern") {
            const bool is_extern = t.text == ".extern";
            take();
            if (is_extern && peek().text == ".shared") {
                variable(module_shared_, true);
                return;
            }
            top_level();
        } else if (t.text == ".entry") {
            entry();
        } else if (t.text == ".func") {
            function();
        } else if (t.text == ".shared") {
            variable(module_shared_, false);
        } else if (t.kind == TokenKind::word && t.text.starts_with(".")) {
            skip_statement_or_block();
        } else {
            fail(t, fmt::format("unexpected '{}' outside a kernel", describe(t)));
        }
    }

    void skip_statement_or_block()
    {
        int depth = 0;
        while (peek().kind != TokenKind::end) {
            const Token t = take();
            if (t.text == "{") ++depth;
            if (t.text == "}" && --depth <= 0) return;
            if (t.text == ";" && depth == 0) return;
        }
        fail(peek(), "the text ends inside a declaration");
    }

    /// `.func` bodies are not analysed (a kernel that calls one is not predicted).
    void function()
    {
        while (peek().kind != TokenKind::end && peek().text != "{" && peek().text != ";") take();
        if (accept(";")) return;
        skip_statement_or_block();
    }

    void file_directive()
    {
        const Token d = take();
        const auto n = number(".file");
        const Token path = take();
        if (path.kind != TokenKind::string) fail(path, ".file: expected a quoted path");
        if (n > 1u << 20) fail(d, ".file: file number out of range");
        module_.files.emplace_back(static_cast<int>(n), std::string(path.text));
        skip_line(d.line);
    }

    void loc_directive()
    {
        const Token d = take();
        const auto file = number(".loc file");
        const auto line = number(".loc line");
        if (file > 1u << 20 || line > 1u << 30) fail(d, ".loc: number out of range");
        loc_file_ = static_cast<int>(file);
        loc_line_ = static_cast<int>(line);
        skip_line(d.line); // column, function_name, inlined_at: the innermost line is the one kept
    }

    /// `.shared .align 16 .b8 name[4096];` (or `.local`), `[]` for dynamic shared memory.
    void variable(std::vector<PtxVariable>& into, bool is_extern)
    {
        const Token d = take();
        PtxVariable v;
        v.dynamic = is_extern;
        std::uint32_t element = 1;
        while (peek().kind == TokenKind::word && peek().text.starts_with(".")) {
            const Token m = take();
            if (m.text == ".align") {
                const auto a = number(".align");
                if (a == 0 || a > 4096 || (a & (a - 1)) != 0) fail(m, ".align: not a power of two up to 4096");
                v.align = static_cast<std::uint32_t>(a);
            } else if (const auto s = type_size(m.text.substr(1)); s > 0) {
                element = s;
            }
        }
        const Token name = take();
        if (name.kind != TokenKind::word) fail(name, fmt::format("{}: expected a variable name", d.text));
        v.name = std::string(name.text);
        std::uint64_t size = element;
        bool unsized = false;
        while (accept("[")) {
            if (accept("]")) {
                unsized = true;
                continue;
            }
            size *= number("array size");
            if (size > limits_.max_shared_bytes) fail(name, fmt::format("{}: {} bytes is too large", v.name, size));
            expect("]");
        }
        v.size = unsized ? 0 : size;
        v.dynamic = v.dynamic || unsized;
        if (v.align < element) v.align = element;
        if (peek().text == "=")
            fail(peek(), fmt::format("{}: initialised {} variables are not supported", v.name, d.text));
        expect(";");
        into.push_back(std::move(v));
    }

    void entry()
    {
        take();
        const Token name = take();
        if (name.kind != TokenKind::word) fail(name, ".entry: expected the kernel's name");
        if (module_.kernels.size() >= limits_.max_kernels)
            fail(name, fmt::format("more than {} kernels", limits_.max_kernels));
        PtxKernel k;
        k.name = std::string(name.text);
        k.declared_line = name.line;
        expect("(");
        std::uint32_t offset = 0;
        while (!accept(")")) {
            if (!k.params.empty()) expect(",");
            k.params.push_back(parameter(offset));
        }
        // Performance directives (.maxntid 256, 1, 1, .reqntid, .minnctapersm ...) up to the body.
        while (peek().kind != TokenKind::end && peek().text != "{") {
            if (peek().text == ";") {
                take();
                module_.kernels.push_back(std::move(k)); // a declaration without a body
                return;
            }
            take();
        }
        expect("{");
        body(k);
        module_.kernels.push_back(std::move(k));
    }

    PtxParameter parameter(std::uint32_t& offset)
    {
        expect(".param");
        PtxParameter p;
        std::uint32_t align = 0;
        while (peek().kind == TokenKind::word && peek().text.starts_with(".")) {
            const Token m = take();
            if (m.text == ".align") {
                const auto a = number(".align");
                if (a == 0 || a > 4096 || (a & (a - 1)) != 0) fail(m, ".align: not a power of two up to 4096");
                align = static_cast<std::uint32_t>(a);
            } else if (m.text != ".ptr" && m.text != ".global" && m.text != ".const" && m.text != ".shared" &&
                       m.text != ".local") {
                p.type = std::string(m.text.substr(1));
            }
        }
        const Token name = take();
        if (name.kind != TokenKind::word) fail(name, ".param: expected a parameter name");
        p.name = std::string(name.text);
        std::uint64_t size = type_size(p.type);
        if (size == 0) fail(name, fmt::format("{}: unknown parameter type '{}'", p.name, p.type));
        while (accept("[")) {
            size *= number("array size");
            if (size > 1u << 16) fail(name, fmt::format("{}: parameter of {} bytes", p.name, size));
            expect("]");
        }
        if (align == 0) align = type_size(p.type);
        offset = (offset + align - 1) / align * align;
        p.size = static_cast<std::uint32_t>(size);
        p.offset = offset;
        offset += p.size;
        return p;
    }

    int register_id(PtxKernel& k, std::string_view name)
    {
        const auto [it, added] = registers_.try_emplace(std::string(name), static_cast<int>(k.register_names.size()));
        if (added) k.register_names.emplace_back(name);
        return it->second;
    }

    void body(PtxKernel& k)
    {
        registers_.clear();
        std::unordered_map<std::string, int> labels;
        std::vector<std::pair<std::size_t, Token>> branches; // instruction, label token
        int depth = 1;
        while (depth > 0) {
            const Token t = peek();
            if (t.kind == TokenKind::end) fail(t, fmt::format("kernel {} is never closed", k.name));
            if (accept("{")) {
                ++depth;
            } else if (accept("}")) {
                --depth;
            } else if (t.text == ".loc") {
                loc_directive();
            } else if (t.text == ".file") {
                file_directive();
            } else if (t.text == ".shared") {
                variable(k.shared, false);
            } else if (t.text == ".local") {
                variable(k.local, false);
            } else if (t.kind == TokenKind::word && t.text.starts_with(".")) {
                skip_statement(); // .reg, .pragma, .param (call scopes) and other declarations
            } else if (t.kind == TokenKind::word && peek(1).text == ":") {
                if (!labels.try_emplace(std::string(t.text), static_cast<int>(k.instructions.size())).second)
                    fail(t, fmt::format("label {} is defined twice", t.text));
                take();
                take();
            } else {
                if (k.instructions.size() >= limits_.max_instructions)
                    fail(t, fmt::format("kernel {} has more than {} instructions", k.name, limits_.max_instructions));
                k.instructions.push_back(instruction(k));
                const auto& in = k.instructions.back();
                if ((in.opcode == "bra" || in.opcode == "brx") && !in.operands.empty() &&
                    in.operands[0].kind == OperandKind::symbol)
                    branches.emplace_back(k.instructions.size() - 1, t);
            }
        }
        for (const auto& [index, at] : branches) {
            auto& in = k.instructions[index];
            const auto it = labels.find(in.operands[0].symbol);
            if (it == labels.end())
                fail(at, fmt::format("branch to {}, a label the kernel does not define", in.operands[0].symbol));
            in.target = it->second;
        }
    }

    Instruction instruction(PtxKernel& k)
    {
        Instruction in;
        in.ptx_line = peek().line;
        in.file = loc_file_;
        in.line = loc_line_;
        if (accept("@")) {
            in.guard_negated = accept("!");
            const Token p = take();
            if (p.kind != TokenKind::word || !p.text.starts_with("%")) fail(p, "expected a predicate after '@'");
            in.guard = register_id(k, p.text);
        }
        const Token op = take();
        if (op.kind != TokenKind::word || op.text.starts_with(".") || op.text.starts_with("%"))
            fail(op, fmt::format("expected an instruction, found '{}'", describe(op)));
        std::string_view text = op.text;
        const auto dot = text.find('.');
        in.opcode = std::string(text.substr(0, dot));
        while (dot != std::string_view::npos && !text.empty()) {
            text = text.substr(text.find('.') + 1);
            const auto next = text.find('.');
            in.modifiers.emplace_back(text.substr(0, next));
            if (next == std::string_view::npos) break;
        }
        while (!accept(";")) {
            if (!in.operands.empty()) {
                if (peek().text == "(" || peek().text == ")") {
                    take();
                    continue;
                }
                expect(",");
            }
            if (in.operands.size() >= limits_.max_operands)
                fail(peek(), fmt::format("more than {} operands", limits_.max_operands));
            in.operands.push_back(operand(k));
        }
        return in;
    }

    Operand register_or_special(PtxKernel& k, const Token& t)
    {
        Operand o;
        if (t.text == "_") {
            o.kind = OperandKind::sink;
            return o;
        }
        for (const auto& s : special_names)
            if (s.name == t.text) {
                o.kind = OperandKind::special;
                o.special = s.reg;
                return o;
            }
        if (t.text.starts_with("%") && is_other_special(t.text)) {
            o.kind = OperandKind::special;
            return o;
        }
        if (t.text.starts_with("%")) {
            o.kind = OperandKind::reg;
            o.reg = register_id(k, t.text);
            return o;
        }
        o.kind = OperandKind::symbol;
        o.symbol = std::string(t.text);
        return o;
    }

    Operand operand(PtxKernel& k)
    {
        Token t = take();
        // A call's parenthesised operands; skipped in a loop, never recursively (a PTX of a million
        // "(" must not exhaust the stack).
        while (t.text == "(") t = take();
        if (t.text == "[") {
            Operand o;
            o.kind = OperandKind::address;
            const Token base = take();
            if (base.kind == TokenKind::number) {
                std::int64_t v = 0;
                if (!parse_number(base.text, v)) fail(base, fmt::format("'{}' is not a number", describe(base)));
                o.value = v;
            } else if (base.kind == TokenKind::word) {
                const Operand b = register_or_special(k, base);
                if (b.kind == OperandKind::reg)
                    o.reg = b.reg;
                else if (b.kind == OperandKind::symbol)
                    o.symbol = b.symbol;
                else
                    fail(base, fmt::format("address based on '{}'", describe(base)));
                if (peek().text == "+" || peek().text == "-") {
                    bool minus = take().text == "-";
                    // ptxas' own spelling of a negative offset: [%rd88+-256].
                    if (peek().text == "-") {
                        take();
                        minus = !minus;
                    }
                    std::int64_t v = 0;
                    const Token n = take();
                    if (n.kind != TokenKind::number || !parse_number(n.text, v))
                        fail(n, fmt::format("address offset: '{}' is not a number", describe(n)));
                    o.value = minus ? static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(v)) : v;
                }
            } else {
                fail(base, fmt::format("address: unexpected '{}'", describe(base)));
            }
            expect("]");
            return o;
        }
        if (t.text == "{") {
            Operand o;
            o.kind = OperandKind::vector;
            while (!accept("}")) {
                if (!o.regs.empty()) expect(",");
                const Token r = take();
                if (r.kind != TokenKind::word) fail(r, "vector: expected a register");
                const Operand e = register_or_special(k, r);
                o.regs.push_back(e.kind == OperandKind::reg ? e.reg : -1);
                if (o.regs.size() > 8) fail(r, "vector of more than 8 elements");
            }
            return o;
        }
        if (t.text == "-" || t.kind == TokenKind::number) {
            const Token n = t.text == "-" ? take() : t;
            std::int64_t v = 0;
            if (n.kind != TokenKind::number || !parse_number(n.text, v))
                fail(n, fmt::format("'{}' is not a number", describe(n)));
            Operand o;
            o.kind = OperandKind::imm;
            o.value = t.text == "-" ? static_cast<std::int64_t>(0 - static_cast<std::uint64_t>(v)) : v;
            return o;
        }
        if (t.text == "!" && peek().kind == TokenKind::word) { // a negated predicate source
            Operand o = register_or_special(k, take());
            o.negated = true;
            return o;
        }
        if (t.kind != TokenKind::word) fail(t, fmt::format("unexpected '{}' in an operand", describe(t)));
        Operand o = register_or_special(k, t);
        if (accept("|")) {
            const Token second = take();
            if (second.kind != TokenKind::word) fail(second, "expected a register after '|'");
            o.second_reg = register_or_special(k, second).reg;
        }
        return o;
    }

    const std::string& origin_;
    const PtxLimits& limits_;
    Tokenizer tokenizer_;
    Token look_[2];
    PtxModule module_;
    std::vector<PtxVariable> module_shared_;
    std::unordered_map<std::string, int> registers_;
    int loc_file_ = -1;
    int loc_line_ = 0;
};

} // namespace

PtxModule parse_ptx(std::string_view text, const std::string& origin, const PtxLimits& limits)
{
    // nvrtcGetPTX and a fatbin's PTX end in a NUL.
    while (!text.empty() && text.back() == '\0') text.remove_suffix(1);
    return Parser(text, origin, limits).run();
}

} // namespace harness::analysis
