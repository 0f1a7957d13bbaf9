#pragma once
// Integer-exact expressions of sweep parameters: launch geometry, buffer sizes, scalars, flops.

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace harness::suite {

/// The longest expression text parse() accepts.
inline constexpr std::size_t max_expression_length = 4096;

/// Values of named parameters for one case.
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

/// A parse or evaluation error with the 0-based offset of the offending token in the text.
class ExpressionError : public std::runtime_error {
public:
    ExpressionError(const std::string& message, std::size_t offset) : std::runtime_error(message), offset_(offset) {}
    std::size_t offset() const { return offset_; }

private:
    std::size_t offset_;
};

struct ExprNode;

/// A parsed expression: + - * / %, parentheses, unary minus, ceil_div, min, max, literals, names.
class Expression {
public:
    Expression() = default;
    /// Parses text; throws ExpressionError with the position of the first bad token, also for
    /// text longer than max_expression_length or nested too deeply to evaluate.
    static Expression parse(const std::string& text);
    /// A constant expression.
    static Expression constant(std::int64_t value);

    /// Evaluates with 64-bit signed arithmetic; throws ExpressionError on unknown names,
    /// division by zero and overflow.
    std::int64_t evaluate(const Bindings& bindings) const;

    /// Every name the expression reads, with its offset, in order of appearance.
    std::vector<std::pair<std::string, std::size_t>> names() const;

    const std::string& text() const { return text_; }
    bool empty() const { return root_ == nullptr; }

private:
    std::string text_;
    std::shared_ptr<const ExprNode> root_;
};

} // namespace harness::suite
