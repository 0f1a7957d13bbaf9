#pragma once
// Integer-exact expressions of sweep parameters: launch geometry, buffer sizes, scalars, flops.

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
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

/// An expression with one name left free and every other fixed, for evaluating it at many values
/// of that name (a buffer's `index:` at every element): no name is looked up per evaluation.
class BoundExpression {
public:
    /// Evaluates with the free name at `value`; throws ExpressionError as Expression::evaluate does.
    std::int64_t evaluate(std::int64_t value) const;

    /// One step of the postfix program the tree is flattened into.
    struct Step {
        enum class Op : std::uint8_t { literal, free, negate, add, sub, mul, div, mod, min, max, ceil_div } op;
        std::int64_t value = 0; ///< of a literal
        std::size_t offset = 0; ///< in the text, for errors
    };

private:
    friend class Expression;
    std::vector<Step> program_;
};

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

    /// The expression with `variable` free and every other name fixed to its value in `constants`
    /// (`variable` wins over a constant of the same name); throws ExpressionError on a name that
    /// is neither, and on an empty expression.
    BoundExpression bind(const Bindings& constants, std::string_view variable) const;

    /// Every name the expression reads, with its offset, in order of appearance.
    std::vector<std::pair<std::string, std::size_t>> names() const;

    const std::string& text() const { return text_; }
    bool empty() const { return root_ == nullptr; }

private:
    std::string text_;
    std::shared_ptr<const ExprNode> root_;
};

} // namespace harness::suite
