#include "harness/suite/expression.hxx"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

namespace harness::suite {

struct ExprNode {
    enum class Kind { literal, name, negate, binary, call } kind;
    std::int64_t value = 0;
    std::string name; // parameter name or function name
    char op = 0;      // for binary
    std::size_t offset = 0;
    std::size_t depth = 1; // of the tree below and including this node
    std::vector<std::shared_ptr<const ExprNode>> operands;
};

namespace {

using NodePtr = std::shared_ptr<const ExprNode>;

struct FunctionInfo {
    const char* name;
    std::size_t arity;
};
constexpr FunctionInfo functions[] = {{"ceil_div", 2}, {"min", 2}, {"max", 2}};

// Evaluation recurses over the tree, so its depth is bounded (a launch expression needs a handful).
constexpr std::size_t max_tree_depth = 200;
constexpr std::size_t max_nesting = 100; // parentheses, calls and signs inside one another

std::size_t depth_of(const std::vector<std::shared_ptr<const ExprNode>>& operands)
{
    std::size_t deepest = 0;
    for (const auto& op : operands) deepest = std::max(deepest, op->depth);
    return deepest + 1;
}

// Recursive descent: expr := term (('+'|'-') term)*, term := unary (('*'|'/'|'%') unary)*,
// unary := '-' unary | primary, primary := literal | name | name '(' args ')' | '(' expr ')'.
class Parser {
public:
    explicit Parser(const std::string& text) : text_(text) {}

    NodePtr parse_all()
    {
        if (text_.size() > max_expression_length)
            throw ExpressionError(fmt::format("longer than {} characters", max_expression_length),
                                  max_expression_length);
        skip_space();
        if (pos_ == text_.size()) throw ExpressionError("empty expression", 0);
        auto node = parse_sum();
        skip_space();
        if (pos_ != text_.size()) throw ExpressionError(fmt::format("unexpected '{}'", text_[pos_]), pos_);
        return node;
    }

private:
    void skip_space()
    {
        while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    }
    bool accept(char c)
    {
        skip_space();
        if (pos_ < text_.size() && text_[pos_] == c) {
            ++pos_;
            return true;
        }
        return false;
    }

    NodePtr binary(char op, std::size_t offset, NodePtr lhs, NodePtr rhs)
    {
        auto node = std::make_shared<ExprNode>();
        node->kind = ExprNode::Kind::binary;
        node->op = op;
        node->offset = offset;
        node->operands = {std::move(lhs), std::move(rhs)};
        return finish(std::move(node));
    }

    /// Sets the node's depth and refuses a tree too deep to evaluate safely.
    NodePtr finish(std::shared_ptr<ExprNode> node) const
    {
        node->depth = depth_of(node->operands);
        if (node->depth > max_tree_depth)
            throw ExpressionError(fmt::format("more than {} operations inside one another", max_tree_depth),
                                  node->offset);
        return node;
    }

    /// Counts how deeply the parser has descended into parentheses, calls and signs.
    class Nesting {
    public:
        Nesting(Parser& parser, std::size_t at) : parser_(parser)
        {
            if (++parser_.nesting_ > max_nesting)
                throw ExpressionError(fmt::format("more than {} levels of nesting", max_nesting), at);
        }
        ~Nesting() { --parser_.nesting_; }
        Nesting(const Nesting&) = delete;
        Nesting& operator=(const Nesting&) = delete;

    private:
        Parser& parser_;
    };

    NodePtr parse_sum()
    {
        auto lhs = parse_product();
        for (;;) {
            skip_space();
            const std::size_t at = pos_;
            if (accept('+'))
                lhs = binary('+', at, lhs, parse_product());
            else if (accept('-'))
                lhs = binary('-', at, lhs, parse_product());
            else
                return lhs;
        }
    }

    NodePtr parse_product()
    {
        auto lhs = parse_unary();
        for (;;) {
            skip_space();
            const std::size_t at = pos_;
            if (accept('*'))
                lhs = binary('*', at, lhs, parse_unary());
            else if (accept('/'))
                lhs = binary('/', at, lhs, parse_unary());
            else if (accept('%'))
                lhs = binary('%', at, lhs, parse_unary());
            else
                return lhs;
        }
    }

    NodePtr parse_unary()
    {
        skip_space();
        const std::size_t at = pos_;
        if (accept('-')) {
            const Nesting nested(*this, at);
            auto node = std::make_shared<ExprNode>();
            node->kind = ExprNode::Kind::negate;
            node->offset = at;
            node->operands = {parse_unary()};
            return finish(std::move(node));
        }
        if (accept('+')) {
            const Nesting nested(*this, at);
            return parse_unary();
        }
        return parse_primary();
    }

    NodePtr parse_primary()
    {
        skip_space();
        if (pos_ == text_.size()) throw ExpressionError("expression ends too early", pos_);
        const std::size_t start = pos_;
        const char c = text_[pos_];
        if (c == '(') {
            const Nesting nested(*this, pos_);
            ++pos_;
            auto inner = parse_sum();
            if (!accept(')')) throw ExpressionError("missing ')'", pos_);
            return inner;
        }
        if (std::isdigit(static_cast<unsigned char>(c))) {
            std::int64_t value = 0;
            while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
                const int digit = text_[pos_] - '0';
                if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, digit, &value))
                    throw ExpressionError("integer literal too large", start);
                ++pos_;
            }
            if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.'))
                throw ExpressionError(fmt::format("bad number '{}'", text_.substr(start, pos_ - start + 1)), start);
            auto node = std::make_shared<ExprNode>();
            node->kind = ExprNode::Kind::literal;
            node->value = value;
            node->offset = start;
            return node;
        }
        if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
            while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
                ++pos_;
            std::string name = text_.substr(start, pos_ - start);
            skip_space();
            auto node = std::make_shared<ExprNode>();
            node->offset = start;
            node->name = name;
            if (pos_ < text_.size() && text_[pos_] == '(') {
                const Nesting nested(*this, pos_);
                ++pos_;
                const FunctionInfo* info = nullptr;
                for (const auto& f : functions)
                    if (name == f.name) info = &f;
                if (!info) throw ExpressionError(fmt::format("unknown function '{}'", name), start);
                node->kind = ExprNode::Kind::call;
                if (!accept(')')) {
                    do node->operands.push_back(parse_sum());
                    while (accept(','));
                    if (!accept(')')) throw ExpressionError("missing ')' after arguments", pos_);
                }
                if (node->operands.size() != info->arity)
                    throw ExpressionError(
                        fmt::format("{} takes {} arguments, got {}", name, info->arity, node->operands.size()), start);
                return finish(std::move(node));
            }
            node->kind = ExprNode::Kind::name;
            return node;
        }
        throw ExpressionError(fmt::format("unexpected '{}'", c), start);
    }

    const std::string& text_;
    std::size_t pos_ = 0;
    std::size_t nesting_ = 0;
};

/// Applies a checked builtin (`__builtin_add_overflow` etc.) and throws on overflow.
template <typename Op> std::int64_t checked(Op op, std::int64_t x, std::int64_t y, std::size_t offset)
{
    std::int64_t r = 0;
    if (op(x, y, &r)) throw ExpressionError("integer overflow", offset);
    return r;
}

constexpr auto add = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_add_overflow(a, b, r); };
constexpr auto sub = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_sub_overflow(a, b, r); };
constexpr auto mul = [](std::int64_t a, std::int64_t b, std::int64_t* r) { return __builtin_mul_overflow(a, b, r); };

std::int64_t eval(const ExprNode& n, const Bindings& b)
{
    switch (n.kind) {
    case ExprNode::Kind::literal: return n.value;
    case ExprNode::Kind::name: {
        auto it = b.find(n.name);
        if (it == b.end()) throw ExpressionError(fmt::format("unknown name '{}'", n.name), n.offset);
        return it->second;
    }
    case ExprNode::Kind::negate: {
        return checked(sub, 0, eval(*n.operands[0], b), n.offset);
    }
    case ExprNode::Kind::binary: {
        const std::int64_t x = eval(*n.operands[0], b);
        const std::int64_t y = eval(*n.operands[1], b);
        switch (n.op) {
        case '+': return checked(add, x, y, n.offset);
        case '-': return checked(sub, x, y, n.offset);
        case '*': return checked(mul, x, y, n.offset);
        case '/':
        case '%':
            if (y == 0) throw ExpressionError("division by zero", n.offset);
            if (x == INT64_MIN && y == -1) throw ExpressionError("integer overflow", n.offset);
            return n.op == '/' ? x / y : x % y;
        }
        break;
    }
    case ExprNode::Kind::call: {
        const std::int64_t x = eval(*n.operands[0], b);
        const std::int64_t y = eval(*n.operands[1], b);
        if (n.name == "min") return x < y ? x : y;
        if (n.name == "max") return x > y ? x : y;
        if (n.name == "ceil_div") {
            if (y <= 0) throw ExpressionError("ceil_div needs a positive divisor", n.offset);
            if (x < 0) throw ExpressionError("ceil_div needs a non-negative dividend", n.offset);
            return x / y + (x % y != 0);
        }
        break;
    }
    }
    throw ExpressionError("malformed expression", n.offset);
}

/// Appends the postfix steps of the tree below `n` (every name but `variable` a literal of its
/// value in `constants`) and returns the most values they hold on the stack at once.
std::size_t flatten(const ExprNode& n, const Bindings& constants, std::string_view variable,
                    std::vector<BoundExpression::Step>& out)
{
    using Op = BoundExpression::Step::Op;
    switch (n.kind) {
    case ExprNode::Kind::literal: out.push_back({Op::literal, n.value, n.offset}); return 1;
    case ExprNode::Kind::name: {
        if (n.name == variable) {
            out.push_back({Op::free, 0, n.offset});
            return 1;
        }
        auto it = constants.find(n.name);
        if (it == constants.end()) throw ExpressionError(fmt::format("unknown name '{}'", n.name), n.offset);
        out.push_back({Op::literal, it->second, n.offset});
        return 1;
    }
    case ExprNode::Kind::negate: {
        const std::size_t depth = flatten(*n.operands[0], constants, variable, out);
        out.push_back({Op::negate, 0, n.offset});
        return depth;
    }
    case ExprNode::Kind::binary:
    case ExprNode::Kind::call: {
        const std::size_t left = flatten(*n.operands[0], constants, variable, out);
        const std::size_t right = flatten(*n.operands[1], constants, variable, out);
        Op op = Op::add;
        if (n.kind == ExprNode::Kind::binary) {
            switch (n.op) {
            case '+': op = Op::add; break;
            case '-': op = Op::sub; break;
            case '*': op = Op::mul; break;
            case '/': op = Op::div; break;
            case '%': op = Op::mod; break;
            default: throw ExpressionError("malformed expression", n.offset);
            }
        } else if (n.name == "min") {
            op = Op::min;
        } else if (n.name == "max") {
            op = Op::max;
        } else if (n.name == "ceil_div") {
            op = Op::ceil_div;
        } else {
            throw ExpressionError("malformed expression", n.offset);
        }
        out.push_back({op, 0, n.offset});
        return std::max(left, right + 1);
    }
    }
    throw ExpressionError("malformed expression", n.offset);
}

void collect_names(const ExprNode& n, std::vector<std::pair<std::string, std::size_t>>& out)
{
    if (n.kind == ExprNode::Kind::name) out.emplace_back(n.name, n.offset);
    for (const auto& op : n.operands) collect_names(*op, out);
}

} // namespace

Expression Expression::parse(const std::string& text)
{
    Expression e;
    e.text_ = text;
    e.root_ = Parser(e.text_).parse_all();
    return e;
}

Expression Expression::constant(std::int64_t value)
{
    return parse(std::to_string(value));
}

std::int64_t Expression::evaluate(const Bindings& bindings) const
{
    if (!root_) throw ExpressionError("empty expression", 0);
    return eval(*root_, bindings);
}

BoundExpression Expression::bind(const Bindings& constants, std::string_view variable) const
{
    if (!root_) throw ExpressionError("empty expression", 0);
    BoundExpression bound;
    // parse() bounds the tree's depth, and with it the values evaluate() holds at once.
    if (flatten(*root_, constants, variable, bound.program_) > max_tree_depth + 1)
        throw ExpressionError(fmt::format("more than {} operations inside one another", max_tree_depth), 0);
    return bound;
}

std::int64_t BoundExpression::evaluate(std::int64_t value) const
{
    if (program_.empty()) throw ExpressionError("empty expression", 0);
    std::int64_t stack[max_tree_depth + 1]; // bind() checked the program's depth against it
    std::size_t top = 0;                    // values on the stack
    for (const Step& s : program_) {
        using Op = Step::Op;
        if (s.op == Op::literal || s.op == Op::free) {
            stack[top++] = s.op == Op::literal ? s.value : value;
            continue;
        }
        if (s.op == Op::negate) {
            stack[top - 1] = checked(sub, 0, stack[top - 1], s.offset);
            continue;
        }
        const std::int64_t y = stack[--top];
        std::int64_t& x = stack[top - 1];
        switch (s.op) {
        case Op::add: x = checked(add, x, y, s.offset); break;
        case Op::sub: x = checked(sub, x, y, s.offset); break;
        case Op::mul: x = checked(mul, x, y, s.offset); break;
        case Op::div:
        case Op::mod:
            if (y == 0) throw ExpressionError("division by zero", s.offset);
            if (x == INT64_MIN && y == -1) throw ExpressionError("integer overflow", s.offset);
            x = s.op == Op::div ? x / y : x % y;
            break;
        case Op::min: x = x < y ? x : y; break;
        case Op::max: x = x > y ? x : y; break;
        case Op::ceil_div:
            if (y <= 0) throw ExpressionError("ceil_div needs a positive divisor", s.offset);
            if (x < 0) throw ExpressionError("ceil_div needs a non-negative dividend", s.offset);
            x = x / y + (x % y != 0);
            break;
        default: throw ExpressionError("malformed expression", s.offset);
        }
    }
    return stack[0];
}

std::vector<std::pair<std::string, std::size_t>> Expression::names() const
{
    std::vector<std::pair<std::string, std::size_t>> out;
    if (root_) collect_names(*root_, out);
    return out;
}

} // namespace harness::suite
