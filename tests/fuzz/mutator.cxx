#include "mutator.hxx"

#include <algorithm>
#include <array>

namespace harness::fuzz {

std::uint64_t Random::next()
{
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t input_seed(std::uint64_t campaign_seed, std::string_view target, std::uint64_t input)
{
    std::uint64_t h = 0xcbf29ce484222325ULL; // FNV-1a of the target name
    for (unsigned char c : target) h = (h ^ c) * 0x100000001b3ULL;
    Random mix(campaign_seed ^ h);
    mix.next();
    return mix.next() ^ (input * 0x9e3779b97f4a7c15ULL);
}

std::span<const std::string_view> common_tokens()
{
    using namespace std::string_view_literals;
    // clang-format off
    static constexpr std::string_view tokens[] = {
        // paths
        ".."sv, "../"sv, "../../../../"sv, "/etc/passwd"sv, "/tmp/x"sv, "/"sv, "."sv,
        // line structure and quoting
        "\n"sv, "\r\n"sv, "\r"sv, "\t"sv, " "sv, "\""sv, "'"sv, "\\"sv, "\\n"sv, "\\u0000"sv, "\\x80"sv,
        // numbers at the edges of what a 64-bit integer or a double holds
        "nan"sv, "NaN"sv, ".nan"sv, "inf"sv, "-inf"sv, ".inf"sv, "-.inf"sv, "1e999"sv, "-1e999"sv, "1e-999"sv,
        "1e308"sv, "4.9e-324"sv, "9223372036854775807"sv, "9223372036854775808"sv, "-9223372036854775808"sv,
        "-9223372036854775809"sv, "18446744073709551615"sv, "4294967297"sv, "4294967295"sv, "2147483648"sv,
        "2147483647"sv, "65536"sv, "1025"sv, "2048"sv, "-1"sv, "0"sv, "00"sv, "0x7fffffffffffffff"sv, "0x"sv,
        "-0"sv, "1.5"sv, "+1"sv, "1_000"sv, "0b1"sv, "0o7"sv,
        // nesting openers
        "[[[["sv, "(((("sv, "{{{{"sv, "]]]]"sv, "))))"sv, "}}}}"sv,
        // YAML structure: anchors, aliases, merge keys, tags, block scalars, documents
        "&a "sv, "*a"sv, "<<: *a"sv, "\n<<: *a\n"sv, "&a [*a]"sv, "!!str "sv, "!!int "sv, "!!binary "sv,
        "!tag "sv, "? "sv, ": "sv, "- "sv, "---\n"sv, "\n...\n"sv, "%YAML 1.2\n"sv, "|\n  "sv, ">-\n  "sv,
        "# "sv, "~"sv, "null"sv, "true"sv, "[]"sv, "{}"sv, ", "sv,
        // bytes that are not UTF-8, and some that are but are unusual
        "\x80"sv, "\xff"sv, "\xc0\xaf"sv, "\xed\xa0\x80"sv, "\xef\xbb\xbf"sv, "\xe2\x80\xae"sv, "\x7f"sv,
        std::string_view("\0", 1),
    };
    // clang-format on
    return tokens;
}

namespace {

/// A line of `text` picked at random: [begin, end) including its newline.
std::pair<std::size_t, std::size_t> random_line(const std::string& text, Random& random)
{
    const std::size_t at = random.below(text.size());
    std::size_t begin = text.rfind('\n', at == 0 ? 0 : at - 1);
    begin = (begin == std::string::npos || at == 0) ? 0 : begin + 1;
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end + 1;
    return {begin, end};
}

/// A span of up to `limit` bytes, biased to short ones.
std::pair<std::size_t, std::size_t> random_span(const std::string& text, Random& random, std::size_t limit)
{
    const std::size_t begin = random.below(text.size() + 1);
    const std::size_t room = text.size() - begin;
    const std::size_t longest = std::min(room, random.one_in(4) ? limit : std::size_t{16});
    return {begin, begin + random.below(longest + 1)};
}

} // namespace

Mutator::Mutator(std::span<const Seed> seeds, std::span<const std::string_view> dictionary, std::size_t max_len)
    : seeds_(seeds), tokens_(dictionary.begin(), dictionary.end()), max_len_(max_len)
{
    tokens_.insert(tokens_.end(), common_tokens().begin(), common_tokens().end());
}

std::string_view Mutator::token(Random& random) const
{
    return tokens_[random.below(tokens_.size())];
}

void Mutator::mutate_once(std::string& text, Random& random) const
{
    static constexpr std::array<unsigned char, 16> interesting_bytes = {0x00, 0x80, 0xff, 0xc0, '\n', '\r', '\t', ' ',
                                                                        '"',  '\'', ':',  ',',  '[',  '{',  '#',  '-'};
    switch (random.below(14)) {
    case 0: // flip a bit
        if (!text.empty()) text[random.below(text.size())] ^= static_cast<char>(1u << random.below(8));
        break;
    case 1: // an interesting byte over another
        if (!text.empty())
            text[random.below(text.size())] =
                static_cast<char>(interesting_bytes[random.below(interesting_bytes.size())]);
        break;
    case 2: { // insert random bytes
        std::string bytes(1 + random.below(8), '\0');
        for (char& c : bytes) c = static_cast<char>(random.below(256));
        text.insert(random.below(text.size() + 1), bytes);
        break;
    }
    case 3: { // delete a span
        const auto [begin, end] = random_span(text, random, text.size() / 2);
        text.erase(begin, end - begin);
        break;
    }
    case 4: { // duplicate a span somewhere else
        const auto [begin, end] = random_span(text, random, 256);
        const std::string span = text.substr(begin, end - begin);
        text.insert(random.below(text.size() + 1), span);
        break;
    }
    case 5: { // copy a line, next to it or elsewhere: duplicate keys, repeated rows
        if (text.empty()) break;
        const auto [begin, end] = random_line(text, random);
        std::string line = text.substr(begin, end - begin);
        if (line.empty() || line.back() != '\n') line += '\n';
        const auto [to, unused] = random.one_in(2) ? std::pair{end, end} : random_line(text, random);
        text.insert(std::min(to, text.size()), line);
        break;
    }
    case 6: { // delete a line
        if (text.empty()) break;
        const auto [begin, end] = random_line(text, random);
        text.erase(begin, end - begin);
        break;
    }
    case 7: { // indent or dedent a line
        if (text.empty()) break;
        const auto [begin, end] = random_line(text, random);
        if (random.one_in(2))
            text.insert(begin, random.one_in(2) ? "  " : " ");
        else if (text.compare(begin, 2, "  ") == 0)
            text.erase(begin, 2);
        break;
    }
    case 8: // insert a token
        text.insert(random.below(text.size() + 1), token(random));
        break;
    case 9: { // replace a word (a name or a number) with a token
        if (text.empty()) break;
        auto is_word = [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
        };
        std::size_t at = random.below(text.size());
        while (at < text.size() && !is_word(text[at])) ++at;
        std::size_t end = at;
        while (end < text.size() && is_word(text[end])) ++end;
        text.replace(at, end - at, token(random));
        break;
    }
    case 10: { // splice: this text up to a point, another seed from a point on
        const Seed& other = seeds_[random.below(seeds_.size())];
        const std::size_t cut = random.below(text.size() + 1);
        const std::size_t from = random.below(other.text.size() + 1);
        text = text.substr(0, cut) + other.text.substr(from);
        break;
    }
    case 11: { // deep nesting
        static constexpr std::string_view openers[] = {"[", "(", "{", "- ", "{a: ", "[a, ", "((N)+", "min(N, "};
        const std::string_view opener = openers[random.below(std::size(openers))];
        const std::size_t depth = 1 + random.below(random.one_in(4) ? 20000 : 64);
        std::string nest;
        for (std::size_t i = 0; i < depth && nest.size() < max_len_; ++i) nest += opener;
        text.insert(random.below(text.size() + 1), nest);
        break;
    }
    case 12: { // a long run of one character, or of a token
        const std::size_t length = 1 + random.below(random.one_in(4) ? max_len_ / 2 : 300);
        std::string run;
        if (random.one_in(2))
            run.assign(length, "aN9 .\"\\"[random.below(7)]);
        else
            for (const std::string_view t = token(random); run.size() < length && !t.empty();) run += t;
        text.insert(random.below(text.size() + 1), run);
        break;
    }
    default: { // a number at a line's value nudged or replaced: off-by-one and sign bugs
        const std::size_t at = text.find_first_of("0123456789", random.below(text.size() + 1));
        if (at == std::string::npos) break;
        std::size_t end = at;
        while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
        static constexpr std::string_view numbers[] = {"0",
                                                       "1",
                                                       "-1",
                                                       "1023",
                                                       "1024",
                                                       "1025",
                                                       "2048",
                                                       "65536",
                                                       "2147483647",
                                                       "2147483648",
                                                       "4294967296",
                                                       "4294967297",
                                                       "9223372036854775807",
                                                       "100000000000"};
        text.replace(at, end - at, numbers[random.below(std::size(numbers))]);
        break;
    }
    }
}

std::string Mutator::mutate(Random& random, std::size_t& origin) const
{
    origin = random.below(seeds_.size());
    std::string text = seeds_[origin].text;
    // Mostly a few stacked mutations; now and then many, which reach states a single step cannot.
    const std::size_t count = random.one_in(8) ? 1 + random.below(32) : 1 + random.below(4);
    for (std::size_t i = 0; i < count; ++i) {
        mutate_once(text, random);
        if (text.size() > max_len_) text.resize(max_len_);
    }
    return text;
}

} // namespace harness::fuzz
