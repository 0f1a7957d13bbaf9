// The step finder on a synthetic population: SERIES scans (default 1,000) of 512..4,096 points,
// each a smooth shape (flat, ramp, 1/x plus a floor, sqrt, a ramp with a knee) times 1..4 steps of
// 2..100 % up or down, some rising over 2..3 points, with 0.5..5 % Gaussian noise; and as many
// clean scans. Prints the precision and recall of find_steps at its default options (recall by
// depth and noise), the false steps per 1,000 clean scans, and the time per 4,096-point scan.
//
// Then the comb finder (add_comb_steps) on alignment scans: SERIES (at least 1,000) scans of
// 128..1,024 points whose pitch grows by 2, 4 or 8 bytes a point (a comb of 16, 8 or 4 points),
// with 0.5..5 % noise and a gentle trend: clean ones, a comb all along the axis (the misaligned
// points 0..40 % slower, as far as they are from alignment) or flat, and ones that turn from a
// level into a comb 5..50 % deep at a random point, as rows padded to a capacity and packed past
// it do. Prints the false steps of the whole-series finder and those the comb finder adds, and
// the recall of the planted steps with and without the comb finder, by depth and noise.
//
// Last, the gate on shallow staircases as users' row kernels draw them: a step every 32 points,
// 4..8 % deep (around min_depth 5 %), 0.3..1 % noise per point and a level that moves as a whole by
// up to 2 % between processes. A baseline is recorded from one scan; clean reruns and planted
// changes (the interior 10 % slower with the ends unchanged, a cliff moved by 16 points, the level
// before the first cliff risen to it, a new 6 % step) are judged against it, once with a baseline of
// steps alone and once with one that keeps the map's levels. Prints the false alarms and the
// recall of each.
//
// And a cliff baseline of 60,000 maps read and looked up, map by map, as the gate does.
//
//   cliff_bench [SERIES] [WINDOW]

#include "../common/staircase_suite.hxx"
#include "harness/cliff/combs.hxx"
#include "harness/cliff/steps.hxx"
#include "harness/compare/cliff_baseline.hxx"
#include "harness/compare/cliff_gate.hxx"
#include "harness/suite/suite.hxx"

#include <array>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

using namespace harness;
using namespace harness::cliff;

namespace {

/// A step put into a series: the rise starts after point `first` and ends at point `last`, and
/// multiplies the level by `factor`.
struct TrueStep {
    std::size_t first = 0, last = 0;
    double factor = 1;
    double noise = 0;
    /// How large it is, up or down: 0.5 both for 100 -> 150 and for 150 -> 100.
    double size() const { return std::max(factor, 1.0 / factor) - 1.0; }
};

struct Scan {
    std::vector<double> x, values, noise;
    std::vector<TrueStep> steps;
};

/// A smooth shape over x = 1..n, of level about 100.
double shape(int kind, double x, double n)
{
    switch (kind) {
    case 0: return 100.0;
    case 1: return 50.0 + 100.0 * x / n;
    case 2: return 60.0 + 40.0 * n / (x * 8.0 + n);
    case 3: return 20.0 + 100.0 * std::sqrt(x / n);
    default: return 80.0 + (x > n / 3 ? 60.0 * (x - n / 3) / n : 0.0);
    }
}

Scan make_scan(std::mt19937& rng, std::size_t step_count, std::size_t n)
{
    std::uniform_int_distribution<int> kind(0, 4);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<double> gauss(0.0, 1.0);
    Scan s;
    const int k = kind(rng);
    // Log-uniform noise 0.5 .. 5 %, and depths 2 .. 100 %.
    const double noise = 0.005 * std::pow(10.0, unit(rng));
    for (std::size_t i = 0; i < n; ++i) {
        s.x.push_back(static_cast<double>(i + 1));
        s.values.push_back(shape(k, static_cast<double>(i + 1), static_cast<double>(n)));
    }
    // Steps at least 24 points apart and from the ends.
    std::uniform_int_distribution<std::size_t> where(24, n - 28);
    while (s.steps.size() < step_count) {
        const std::size_t first = where(rng);
        bool clear = true;
        for (const auto& t : s.steps) clear = clear && (first + 24 < t.first || t.first + 24 < first);
        if (!clear) continue;
        TrueStep t;
        t.first = first;
        t.last = first + 1 + (unit(rng) < 0.25 ? static_cast<std::size_t>(1 + 2 * unit(rng)) : 0);
        const double size = 0.02 * std::pow(50.0, unit(rng));
        t.factor = unit(rng) < 0.5 ? 1.0 + size : 1.0 / (1.0 + size);
        t.noise = noise;
        s.steps.push_back(t);
    }
    for (const auto& t : s.steps)
        for (std::size_t i = t.first + 1; i < n; ++i) {
            const double along =
                i >= t.last ? 1.0 : static_cast<double>(i - t.first) / static_cast<double>(t.last - t.first);
            s.values[i] *= std::pow(t.factor, along);
        }
    for (auto& v : s.values) {
        s.noise.push_back(v * noise);
        v *= 1.0 + noise * gauss(rng);
    }
    return s;
}

/// Whether a found step is the true one: its span overlaps the rise, give or take two points.
bool matches(const Cliff& c, const TrueStep& t)
{
    const double first = static_cast<double>(t.first + 1) - 2.0, last = static_cast<double>(t.last + 1) + 2.0;
    return c.x_before <= last && c.x_after >= first;
}

struct Bucket {
    const char* name;
    double low, high;
};

double seconds_since(std::chrono::steady_clock::time_point start)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// An alignment scan: points 0..n-1, the pitch of each, its values and noise, and where a planted
/// step lies (the last point before it; none in a clean scan).
struct CombScan {
    std::vector<double> x, values, noise;
    std::vector<LaunchShape> shapes;
    std::size_t period = 1;
    std::optional<std::size_t> step_after; ///< the last point of the level
    double depth = 0, noise_share = 0;
};

/// How much slower a row of this pitch is than an aligned one, as a share of the comb's depth:
/// rows a half sector off straddle fewer sectors than rows a quarter or an eighth off.
double misalignment(std::uint64_t pitch)
{
    if (pitch % sector_bytes == 0) return 0.0;
    if (pitch % 16 == 0) return 0.5;
    if (pitch % 8 == 0) return 0.8;
    return 1.0;
}

/// A scan whose misaligned points are up to `comb_depth` slower (0: flat): all along, or where
/// `planted`, from a random aligned point on, the level before it padded to that point's pitch.
CombScan make_comb_scan(std::mt19937& rng, double comb_depth, bool planted)
{
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::normal_distribution<double> gauss(0.0, 1.0);
    std::uniform_int_distribution<std::size_t> length(128, 1024), bytes(0, 2);
    CombScan s;
    const std::size_t n = length(rng);
    const std::uint64_t per_point = std::uint64_t{2} << bytes(rng); // 2, 4 or 8 bytes: a comb of 16, 8 or 4
    s.period = sector_bytes / per_point;
    s.noise_share = 0.005 * std::pow(10.0, unit(rng));
    s.depth = comb_depth;
    // A level up to an aligned point at least 24 points from either end, packed after it.
    std::size_t level_until = 0;
    if (planted) {
        std::uniform_int_distribution<std::size_t> where(24, n - 25);
        level_until = where(rng) / s.period * s.period;
        s.step_after = level_until;
    }
    const double trend = 0.2 * (unit(rng) - 0.5);
    for (std::size_t i = 0; i < n; ++i) {
        LaunchShape shape;
        shape.x = static_cast<double>(i);
        shape.pitch_bytes = 4096 + per_point * std::max(i, level_until);
        const double level = 100.0 * (1.0 + trend * static_cast<double>(i) / static_cast<double>(n)) *
                             (1.0 + comb_depth * misalignment(*shape.pitch_bytes));
        s.x.push_back(shape.x);
        s.noise.push_back(level * s.noise_share);
        s.values.push_back(level * (1.0 + s.noise_share * gauss(rng)));
        s.shapes.push_back(shape);
    }
    return s;
}

/// Whether a found step lies within the planted step's period.
bool near_plant(const Cliff& c, const CombScan& s)
{
    const double before = static_cast<double>(*s.step_after), period = static_cast<double>(s.period);
    return c.x_before <= before + period && c.x_after >= before + 1 - period;
}

void comb_bench(std::mt19937& rng, std::size_t series, const StepOptions& plain)
{
    StepOptions options = plain;
    options.worse_only = true; // as GPU maps of time are read
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    const auto cliffs_of = [&](const CombScan& s, std::size_t& added) {
        auto cliffs = find_steps(s.x, s.values, s.noise, options);
        const std::size_t whole = cliffs.size();
        add_comb_steps(cliffs, s.x, s.values, s.noise, s.shapes, GpuShape{}, "x", options);
        added += cliffs.size() - whole;
        return std::make_pair(whole, cliffs);
    };

    std::size_t comb_whole = 0, comb_added = 0, flat_whole = 0, flat_added = 0;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < series; ++i) {
        const CombScan comb = make_comb_scan(rng, 0.4 * unit(rng), false);
        comb_whole += cliffs_of(comb, comb_added).first;
        const CombScan flat = make_comb_scan(rng, 0.0, false);
        flat_whole += cliffs_of(flat, flat_added).first;
    }
    const double clean_s = seconds_since(start);

    constexpr std::array depths = {Bucket{"5-10 %", 0.05, 0.10}, Bucket{"10-20 %", 0.10, 0.20},
                                   Bucket{"20-50 %", 0.20, 0.51}};
    constexpr std::array noises = {Bucket{"0.5-1 %", 0.005, 0.01}, Bucket{"1-2 %", 0.01, 0.02},
                                   Bucket{"2-5 %", 0.02, 0.0501}};
    std::array<std::array<std::size_t, noises.size()>, depths.size()> truth{}, whole_found{}, found{};
    std::size_t elsewhere_whole = 0, elsewhere_comb = 0;
    for (std::size_t i = 0; i < series; ++i) {
        const CombScan s = make_comb_scan(rng, 0.05 * std::pow(10.0, unit(rng)), true);
        std::size_t added = 0;
        const auto cliffs = cliffs_of(s, added).second;
        std::size_t d = 0, n = 0;
        while (d + 1 < depths.size() && s.depth >= depths[d].high) ++d;
        while (n + 1 < noises.size() && s.noise_share >= noises[n].high) ++n;
        ++truth[d][n];
        bool seen_whole = false, seen = false;
        for (const auto& c : cliffs) {
            const bool here = near_plant(c, s);
            seen = seen || here;
            // Only the comb finder's cliffs are explained here.
            (c.explanation.empty() ? elsewhere_whole : elsewhere_comb) += !here;
        }
        for (const auto& c : find_steps(s.x, s.values, s.noise, options)) seen_whole = seen_whole || near_plant(c, s);
        whole_found[d][n] += seen_whole;
        found[d][n] += seen;
    }

    fmt::print("add_comb_steps on alignment scans (comb of 4, 8 or 16 points, min depth {:.0f} %, steps up)\n",
               100 * options.min_depth);
    fmt::print("  {} clean combs (0..40 % deep all along): {} false steps over the whole series, {} added by the "
               "comb finder ({:.1f} per 1,000 scans)\n",
               series, comb_whole, comb_added, 1e3 * static_cast<double>(comb_added) / static_cast<double>(series));
    fmt::print("  {} flat scans with a pitch: {} false steps over the whole series, {} added by the comb finder "
               "({:.1f} per 1,000 scans)\n",
               series, flat_whole, flat_added, 1e3 * static_cast<double>(flat_added) / static_cast<double>(series));
    fmt::print("  {} scans from a level into a comb: {} steps found away from the plant by the whole series, {} "
               "by the comb finder\n",
               series, elsewhere_whole, elsewhere_comb);
    fmt::print("  recall of the planted steps, the whole series alone / with the comb finder, by depth (rows) and "
               "noise (columns), steps in brackets:\n  {:>10}",
               "");
    for (const auto& n : noises) fmt::print(" {:>20}", n.name);
    fmt::print("\n");
    std::size_t all = 0, all_whole = 0, all_found = 0;
    for (std::size_t d = 0; d < depths.size(); ++d) {
        fmt::print("  {:>10}", depths[d].name);
        for (std::size_t n = 0; n < noises.size(); ++n) {
            all += truth[d][n];
            all_whole += whole_found[d][n];
            all_found += found[d][n];
            if (truth[d][n] == 0) {
                fmt::print(" {:>20}", "-");
                continue;
            }
            const auto t = static_cast<double>(truth[d][n]);
            fmt::print(" {:>6.3f} / {:>5.3f} ({:>3})", static_cast<double>(whole_found[d][n]) / t,
                       static_cast<double>(found[d][n]) / t, truth[d][n]);
        }
        fmt::print("\n");
    }
    fmt::print("  recall {:.3f} with the comb finder ({:.3f} without); time: {:.2f} ms per clean scan\n",
               static_cast<double>(all_found) / static_cast<double>(all),
               static_cast<double>(all_whole) / static_cast<double>(all),
               1e3 * clean_s / static_cast<double>(2 * series));
}

} // namespace

/// A row kernel's suite scanned over W = 1024..1279, for the gate's carriers (parsed, never run).
const std::string staircase_suite = test::staircase_suite_text("staircase");

/// One scan of a staircase: `level(W)` times a whole-process factor, with noise drawn per point.
CliffMap staircase_scan(std::mt19937& rng, const std::function<double(int)>& level, double noise)
{
    std::normal_distribution<double> scatter(0.0, noise);
    std::uniform_real_distribution<double> process(-0.02, 0.02);
    const double factor = 1 + process(rng);
    CliffMap m;
    m.variant = "rows";
    m.axis = "W";
    m.arch = "sm_90";
    m.figure = "time";
    m.unit = "us";
    for (int w = 1024; w <= 1279; ++w) {
        const double v = level(w) * factor * (1 + scatter(rng));
        m.x.push_back(w);
        m.values.push_back(v);
        m.noise.push_back(v * noise);
    }
    StepOptions options;
    options.worse_only = true;
    m.cliffs = find_steps(m.x, m.values, m.noise, options);
    return m;
}

compare::CliffBaselineFile recorded_baseline(const CliffMap& map, bool keep_levels)
{
    compare::CliffBaselineFile file;
    file.rows = compare::cliff_rows(map);
    if (keep_levels) file.levels = compare::level_rows(map);
    return file;
}

bool regressed(const std::vector<CliffVerdict>& verdicts)
{
    for (const auto& v : verdicts)
        if (v.judgement.verdict == Verdict::regressed) return true;
    return false;
}

void gate_bench(std::mt19937& rng, std::size_t series)
{
    suite::Suite suite;
    try {
        suite = suite::parse_suite(staircase_suite, std::filesystem::current_path() / "suites" / "staircase.yaml");
    } catch (const std::exception& e) {
        fmt::print("gate on shallow staircases: skipped, run from the project's top folder ({})\n", e.what());
        return;
    }
    std::uniform_real_distribution<double> depth(0.04, 0.08), noise_of(0.003, 0.01);
    constexpr std::size_t reruns = 5;
    const char* planted_names[] = {"interior 10 % slower, ends unchanged", "a cliff moved by 16 points",
                                   "the level before the first cliff risen to it", "a new 6 % step"};
    constexpr std::size_t kinds = 4;
    std::size_t clean = 0;
    std::array<std::size_t, 2> false_alarms{};
    std::array<std::array<std::size_t, 2>, kinds> caught{};
    for (std::size_t i = 0; i < series; ++i) {
        std::vector<double> depths(7);
        for (auto& d : depths) d = depth(rng);
        depths[2] = 0; // a flat stretch for the new step
        const double noise = noise_of(rng);
        const auto level = [depths](int w) {
            double v = 10.0;
            for (std::size_t k = 0; k < depths.size(); ++k)
                if (w >= 1056 + 32 * static_cast<int>(k)) v *= 1 + depths[k];
            return v;
        };
        const CliffMap base = staircase_scan(rng, level, noise);
        const std::array<compare::CliffBaselineFile, 2> baselines = {recorded_baseline(base, false),
                                                                     recorded_baseline(base, true)};
        for (std::size_t r = 0; r < reruns; ++r) {
            const CliffMap run = staircase_scan(rng, level, noise);
            ++clean;
            for (std::size_t b = 0; b < 2; ++b)
                false_alarms[b] += regressed(compare::judge_cliff_map(run, suite, &baselines[b]));
        }
        const std::array<std::function<double(int)>, kinds> planted = {
            [&](int w) { return level(w) * (1 + 0.10 * std::sin(M_PI * (w - 1024) / 255.0)); },
            [&](int w) { return level(w + (w >= 1136 && w < 1152 ? 16 : 0)); },
            [&](int w) { return w < 1056 ? level(1056) : level(w); },
            [&](int w) { return level(w) * (w >= 1136 ? 1.06 : 1.0); },
        };
        for (std::size_t k = 0; k < kinds; ++k) {
            const CliffMap run = staircase_scan(rng, planted[k], noise);
            for (std::size_t b = 0; b < 2; ++b)
                caught[k][b] += regressed(compare::judge_cliff_map(run, suite, &baselines[b]));
        }
    }
    const auto share = [](std::size_t n, std::size_t of) { return of ? static_cast<double>(n) / of : 0.0; };
    fmt::print("gate on shallow staircases (steps of 4-8 % every 32 points, min_depth 5 %, 0.3-1 % noise, +-2 % "
               "between processes), {} baselines:\n",
               series);
    fmt::print("  {:<50} {:>12} {:>12}\n", "", "steps only", "with levels");
    fmt::print("  {:<50} {:>12.3f} {:>12.3f}\n", fmt::format("false alarms, share of {} clean reruns", clean),
               share(false_alarms[0], clean), share(false_alarms[1], clean));
    for (std::size_t k = 0; k < kinds; ++k)
        fmt::print("  {:<50} {:>12.3f} {:>12.3f}\n", fmt::format("caught: {}", planted_names[k]),
                   share(caught[k][0], series), share(caught[k][1], series));
}

/// Reading and looking up a committed cliff baseline of `maps` maps, half flat and half with one
/// cliff (a file of 60,000 rows is 6.7 MB): the parse, and one holds() and cliffs_of() per map.
void baseline_load_bench(std::size_t maps)
{
    compare::CliffBaselineFile file;
    file.set_meta("schema_version", "1");
    for (std::size_t i = 0; i < maps; ++i) {
        compare::CliffRow r;
        r.variant = fmt::format("variant_with_a_long_name_{}", i);
        r.axis = "SLOTS_KIB";
        r.others = "N=1048576";
        r.figure = "theoretical_occupancy";
        if (i % 2 == 1) {
            r.x_before = 27;
            r.x_after = 28;
            r.level_before = 1;
            r.level_after = 0.875;
            r.depth = -0.125;
            r.cause = "occupancy";
        }
        file.rows.push_back(std::move(r));
    }
    const std::string text = compare::cliff_baseline_text(file);
    const auto start = std::chrono::steady_clock::now();
    const auto read = compare::parse_cliff_baseline(text, "sm_90.cliffs.csv");
    const double parse_s = seconds_since(start);
    const auto looked_up = std::chrono::steady_clock::now();
    std::size_t held = 0, cliffs = 0;
    CliffMap m;
    m.axis = "SLOTS_KIB";
    m.others = "N=1048576";
    m.figure = "theoretical_occupancy";
    for (std::size_t i = 0; i < maps; ++i) {
        m.variant = fmt::format("variant_with_a_long_name_{}", i);
        held += read.holds(m);
        cliffs += read.cliffs_of(m).size();
    }
    const double lookup_s = seconds_since(looked_up);
    fmt::print("cliff baseline of {} maps ({:.1f} MB): read in {:.3f} s; {} maps held, {} cliffs, looked up in {:.1f} "
               "us per map\n",
               maps, static_cast<double>(text.size()) / 1e6, parse_s, held, cliffs,
               1e6 * lookup_s / static_cast<double>(maps));
}

int main(int argc, char** argv)
{
    const std::size_t series = argc > 1 ? std::stoul(argv[1]) : 1000;
    StepOptions options;
    if (argc > 2) options.window = std::stoul(argv[2]);
    std::mt19937 rng(20261126);

    constexpr std::array depths = {Bucket{"2-3 %", 0.02, 0.03},   Bucket{"3-5 %", 0.03, 0.05},
                                   Bucket{"5-10 %", 0.05, 0.10},  Bucket{"10-20 %", 0.10, 0.20},
                                   Bucket{"20-50 %", 0.20, 0.50}, Bucket{"50-100 %", 0.50, 1.01}};
    constexpr std::array noises = {Bucket{"0.5-1 %", 0.005, 0.01}, Bucket{"1-2 %", 0.01, 0.02},
                                   Bucket{"2-5 %", 0.02, 0.0501}};
    std::array<std::array<std::size_t, noises.size()>, depths.size()> truth{}, found{};
    std::size_t reported = 0, correct = 0, points = 0, clear = 0, clear_found = 0;
    double analyse_s = 0;
    std::uniform_int_distribution<std::size_t> step_count(1, 4), length(512, 4096);
    for (std::size_t i = 0; i < series; ++i) {
        const Scan s = make_scan(rng, step_count(rng), length(rng));
        const auto start = std::chrono::steady_clock::now();
        const auto cliffs = find_steps(s.x, s.values, s.noise, options);
        analyse_s += seconds_since(start);
        points += s.x.size();
        reported += cliffs.size();
        for (const auto& c : cliffs)
            for (const auto& t : s.steps)
                if (matches(c, t)) {
                    ++correct;
                    break;
                }
        for (const auto& t : s.steps) {
            std::size_t d = 0, n = 0;
            while (d + 1 < depths.size() && t.size() >= depths[d].high) ++d;
            while (n + 1 < noises.size() && t.noise >= noises[n].high) ++n;
            ++truth[d][n];
            // Clear of both thresholds: a fifth deeper than min_depth, half again min_significance noises high.
            const bool is_clear = std::fabs(t.factor - 1.0) >= 1.2 * options.min_depth &&
                                  std::fabs(std::log(t.factor)) >= 1.5 * options.min_significance * t.noise;
            clear += is_clear;
            for (const auto& c : cliffs)
                if (matches(c, t)) {
                    ++found[d][n];
                    clear_found += is_clear;
                    break;
                }
        }
    }

    std::size_t false_steps = 0, clean_points = 0;
    double clean_s = 0;
    for (std::size_t i = 0; i < series; ++i) {
        const Scan s = make_scan(rng, 0, length(rng));
        const auto start = std::chrono::steady_clock::now();
        false_steps += find_steps(s.x, s.values, s.noise, options).size();
        clean_s += seconds_since(start);
        clean_points += s.x.size();
    }

    // One 4,096-point scan, timed on its own.
    const Scan big = make_scan(rng, 3, 4096);
    constexpr int repeats = 50;
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock(); // on a busy machine the process's own time says more
    std::size_t kept = 0;
    for (int r = 0; r < repeats; ++r) kept += find_steps(big.x, big.values, big.noise, options).size();
    const double per_scan_ms = 1e3 * seconds_since(start) / repeats;
    const double per_scan_cpu_ms = 1e3 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC / repeats;

    std::size_t all_truth = 0, all_found = 0;
    for (std::size_t d = 0; d < depths.size(); ++d)
        for (std::size_t n = 0; n < noises.size(); ++n) {
            all_truth += truth[d][n];
            all_found += found[d][n];
        }
    fmt::print("find_steps (min depth {:.0f} %, min significance {:.0f}, window {})\n", 100 * options.min_depth,
               options.min_significance, options.window);
    fmt::print("  {} scans with 1..4 steps: {} steps, {} reported, {} right\n", series, all_truth, reported, correct);
    fmt::print("  precision {:6.3f}\n", reported ? static_cast<double>(correct) / static_cast<double>(reported) : 1.0);
    fmt::print("  recall    {:6.3f}\n",
               all_truth ? static_cast<double>(all_found) / static_cast<double>(all_truth) : 1.0);
    fmt::print("  recall of the {} steps clear of both thresholds (20 % deeper, 50 % more noises): {:.3f}\n", clear,
               clear ? static_cast<double>(clear_found) / static_cast<double>(clear) : 1.0);
    fmt::print("  recall by depth (rows) and noise (columns), steps in brackets:\n  {:>10}", "");
    for (const auto& n : noises) fmt::print(" {:>16}", n.name);
    fmt::print("\n");
    for (std::size_t d = 0; d < depths.size(); ++d) {
        fmt::print("  {:>10}", depths[d].name);
        for (std::size_t n = 0; n < noises.size(); ++n) {
            if (truth[d][n] == 0) {
                fmt::print(" {:>16}", "-");
                continue;
            }
            fmt::print(" {:>9.3f} ({:>4})", static_cast<double>(found[d][n]) / static_cast<double>(truth[d][n]),
                       truth[d][n]);
        }
        fmt::print("\n");
    }
    fmt::print("  {} clean scans: {} false steps ({:.1f} per 1,000 scans)\n", series, false_steps,
               1e3 * static_cast<double>(false_steps) / static_cast<double>(series));
    fmt::print("  time: {:.3f} ms per 4,096-point scan ({:.3f} ms of processor time; {} steps); {:.2f} us per point "
               "over all {} scans\n",
               per_scan_ms, per_scan_cpu_ms, kept / repeats,
               1e6 * (analyse_s + clean_s) / static_cast<double>(points + clean_points), 2 * series);
    comb_bench(rng, std::max<std::size_t>(series, 1000), options);
    gate_bench(rng, std::max<std::size_t>(series / 5, 100));
    baseline_load_bench(60000);
    return 0;
}
