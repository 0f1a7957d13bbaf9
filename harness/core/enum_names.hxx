#pragma once
// The names an enum's values have in files and reports, as one table of {value, name} pairs per
// enum, read both ways by the same two functions: a name is written in one place, and reading a
// file gives back the value it was written from. Enums stay in the data model; text exists only
// where a file is read or written and where a report prints.

#include <cstddef>
#include <optional>
#include <string_view>

namespace harness {

/// One row of an enum's name table.
template <typename Enum> struct EnumName {
    Enum value;
    const char* name;
};

/// The name of `value` in `table`; `fallback` for a value the table lacks.
template <typename Enum, std::size_t N>
constexpr const char* enum_name(const EnumName<Enum> (&table)[N], Enum value, const char* fallback = "?")
{
    for (const auto& row : table)
        if (row.value == value) return row.name;
    return fallback;
}

/// The value named `name` in `table`; nullopt for a name the table lacks.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> enum_from_name(const EnumName<Enum> (&table)[N], std::string_view name)
{
    for (const auto& row : table)
        if (name == row.name) return row.value;
    return std::nullopt;
}

} // namespace harness
