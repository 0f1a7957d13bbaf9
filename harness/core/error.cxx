#include "harness/core/error.hxx"

#include "harness/core/text.hxx"

#include <fmt/format.h>

namespace harness {

namespace {
std::string located(const std::string& file, int line, int column, const std::string& field, const std::string& message)
{
    std::string where = file;
    if (line > 0) where += fmt::format(":{}:{}", line, column);
    return field.empty() ? fmt::format("{}: {}", where, message) : fmt::format("{}: {}: {}", where, field, message);
}
} // namespace

Error::Error(ErrorKind kind, const std::string& message)
    : std::runtime_error(escape_control_characters(message)), kind_(kind)
{
}

InputError::InputError(const std::string& file, int line, int column, const std::string& field,
                       const std::string& message)
    : Error(ErrorKind::bad_input, located(file, line, column, field, message))
{
}

} // namespace harness
