// Prints what drawing buffers' initial contents costs on this machine: nanoseconds per element for
// the kinds of contents suites draw, on one thread and on every core. Usage: draw_bench [ELEMENTS]
#include "harness/run/buffer_data.hxx"
#include "harness/suite/expression.hxx"

#include <chrono>
#include <cstdlib>
#include <fmt/format.h>
#include <string>
#include <thread>
#include <vector>

using namespace harness;

namespace {

/// The fastest of three draws of `count` elements of `spec`, in nanoseconds per element.
double ns_per_element(const suite::BufferSpec& spec, std::size_t count, const suite::Bindings& params, unsigned threads,
                      std::vector<std::byte>& out)
{
    double best = 0;
    for (int round = 0; round < 3; ++round) {
        const auto start = std::chrono::steady_clock::now();
        run::draw_contents(spec, count, params, out.data(), threads);
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
        if (round == 0 || ns < best) best = ns;
    }
    return best / static_cast<double>(count);
}

} // namespace

int main(int argc, char** argv)
{
    const std::size_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : std::size_t{3} << 22;
    if (count == 0) {
        fmt::print(stderr, "usage: draw_bench [ELEMENTS]\n");
        return 2;
    }
    const suite::Bindings params = {{"N", static_cast<std::int64_t>(count / 3)}};
    suite::BufferSpec uniform;
    uniform.name = "in";
    uniform.type = suite::ElementType::f32;
    uniform.init = suite::InitKind::uniform;
    uniform.seed = 1;
    uniform.min = -1;
    uniform.max = 1;
    suite::BufferSpec sequence = uniform;
    sequence.init = suite::InitKind::sequence;
    suite::BufferSpec reordered = uniform; // memory_layout's array of structures
    reordered.index = suite::Expression::parse("(i % 3) * N + i / 3");
    suite::BufferSpec rounded = uniform;
    rounded.round_to = suite::ElementType::bf16;

    std::vector<std::byte> out(count * 4);
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    fmt::print("draw_bench: {} f32 elements, fastest of 3 draws, ns per element\n", count);
    fmt::print("{:<40} {:>12} {:>16}\n", "contents", "one thread", fmt::format("{} threads", cores));
    const struct {
        const char* name;
        const suite::BufferSpec* spec;
    } kinds[] = {{"uniform", &uniform},
                 {"sequence", &sequence},
                 {"uniform, index: (i % 3) * N + i / 3", &reordered},
                 {"uniform, round_to: bf16", &rounded}};
    for (const auto& k : kinds)
        fmt::print("{:<40} {:>12.2f} {:>16.2f}\n", k.name, ns_per_element(*k.spec, count, params, 1, out),
                   ns_per_element(*k.spec, count, params, cores, out));
    return 0;
}
