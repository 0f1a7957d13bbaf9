#include "harness/analysis/warp_evaluator.hxx"

#include "harness/core/error.hxx"

#include <algorithm>
#include <bit>
#include <charconv>
#include <climits>
#include <deque>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace harness::analysis {

namespace {

enum class Op : std::uint8_t {
    mov,
    add,
    sub,
    mul,
    mad,
    div,
    rem,
    min,
    max,
    abs,
    neg,
    not_,
    and_,
    or_,
    xor_,
    shl,
    shr,
    selp,
    setp,
    cvt,
    cvta,
    bfe,
    bfi,
    shfl,
    ld_param,
    access,
    bra,
    ret,
    nop,
    call,
    unknown
};
enum class Space : std::uint8_t { generic, global, shared, local, param, constant, other };
enum class Cmp : std::uint8_t { eq, ne, lt, le, gt, ge, none };
enum class AccessOp : std::uint8_t { load, store, atomic };

struct Type {
    std::uint8_t bits = 0;
    bool sign = false, flt = false, pred = false;
};

std::optional<Type> parse_type(std::string_view m)
{
    if (m == "pred") return Type{1, false, false, true};
    if (m.size() < 2) return std::nullopt;
    const char c = m[0];
    std::string_view digits = m.substr(c == 'b' && m.starts_with("bf") ? 2 : 1);
    int bits = 0;
    const auto r = std::from_chars(digits.data(), digits.data() + digits.size(), bits);
    if (r.ec != std::errc() || bits <= 0 || bits > 128) return std::nullopt;
    const bool is_float =
        c == 'f' || m.starts_with("bf") || m.starts_with("tf") || m.starts_with("e4") || m.starts_with("e5");
    if (!is_float && c != 's' && c != 'u' && c != 'b') return std::nullopt;
    if (r.ptr != digits.data() + digits.size() && !is_float) return std::nullopt; // x2 suffixes: floats only
    if (r.ptr != digits.data() + digits.size()) bits = 32;
    return Type{static_cast<std::uint8_t>(bits), c == 's', is_float, false};
}

struct Decoded {
    Op op = Op::unknown;
    Type type; ///< the operation's type; cvt: the destination's
    Type src;  ///< cvt: the source's
    bool wide = false, hi = false, saturate = false;
    Cmp cmp = Cmp::none;
    bool unsigned_cmp = false; ///< lo, ls, hi, hs
    int combine = 0;           ///< setp .and / .or / .xor
    Space space = Space::generic;
    AccessOp access_op = AccessOp::load;
    std::uint32_t bytes = 0; ///< per lane
    int access = -1;
    int address_operand = -1;
    int shfl_mode = -1;     ///< up, down, bfly, idx
    std::string unmodelled; ///< an access the model does not evaluate (ldmatrix, cp.async), in words
};

constexpr std::int32_t local_tag = INT32_MIN / 2;

__extension__ typedef __int128 int128;
__extension__ typedef unsigned __int128 uint128;

Operand register_operand(int reg)
{
    Operand o;
    o.kind = OperandKind::reg;
    o.reg = reg;
    return o;
}

Operand symbol_operand(const std::string& symbol)
{
    Operand o;
    o.kind = OperandKind::symbol;
    o.symbol = symbol;
    return o;
}

std::uint64_t mask_of(int bits)
{
    if (bits <= 0) return 0;
    return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}
std::int64_t sext(std::uint64_t v, int bits)
{
    if (bits <= 0) return 0;
    if (bits >= 64) return static_cast<std::int64_t>(v);
    const std::uint64_t m = std::uint64_t{1} << (bits - 1);
    v &= mask_of(bits);
    return static_cast<std::int64_t>((v ^ m) - m);
}

Decoded decode(const Instruction& in)
{
    Decoded d;
    std::vector<Type> types;
    std::uint32_t vec = 1;
    for (const auto& m : in.modifiers) {
        if (auto t = parse_type(m))
            types.push_back(*t);
        else if (m == "global")
            d.space = Space::global;
        else if (m == "shared" || m == "shared::cta")
            d.space = Space::shared;
        else if (m.starts_with("shared::"))
            d.space = Space::other;
        else if (m == "local")
            d.space = Space::local;
        else if (m == "param")
            d.space = Space::param;
        else if (m == "const")
            d.space = Space::constant;
        else if (m == "v2")
            vec = 2;
        else if (m == "v4")
            vec = 4;
        else if (m == "v8")
            vec = 8;
        else if (m == "wide")
            d.wide = true;
        else if (m == "hi")
            d.hi = true;
        else if (m == "sat")
            d.saturate = true;
        else if (m == "and")
            d.combine = 1;
        else if (m == "or")
            d.combine = 2;
        else if (m == "xor")
            d.combine = 3;
        else if (m == "eq")
            d.cmp = Cmp::eq;
        else if (m == "ne")
            d.cmp = Cmp::ne;
        else if (m == "lt" || m == "lo")
            d.cmp = Cmp::lt, d.unsigned_cmp = m == "lo";
        else if (m == "le" || m == "ls")
            d.cmp = Cmp::le, d.unsigned_cmp = m == "ls";
        else if (m == "gt")
            d.cmp = Cmp::gt;
        else if (m == "ge" || m == "hs")
            d.cmp = Cmp::ge, d.unsigned_cmp = m == "hs";
        else if (m == "up")
            d.shfl_mode = 0;
        else if (m == "down")
            d.shfl_mode = 1;
        else if (m == "bfly")
            d.shfl_mode = 2;
        else if (m == "idx")
            d.shfl_mode = 3;
    }
    if (!types.empty()) d.type = types.front();
    if (types.size() > 1) d.src = types[1];
    if (in.opcode != "cvt" && !types.empty()) d.type = types.back();
    d.bytes = vec * std::max<std::uint32_t>(1, d.type.bits / 8);
    for (std::size_t i = 0; i < in.operands.size(); ++i)
        if (in.operands[i].kind == OperandKind::address && d.address_operand < 0)
            d.address_operand = static_cast<int>(i);

    static const std::pair<std::string_view, Op> simple[] = {
        {"mov", Op::mov},       {"add", Op::add},      {"sub", Op::sub},       {"mul", Op::mul},
        {"mad", Op::mad},       {"div", Op::div},      {"rem", Op::rem},       {"min", Op::min},
        {"max", Op::max},       {"abs", Op::abs},      {"neg", Op::neg},       {"not", Op::not_},
        {"and", Op::and_},      {"or", Op::or_},       {"xor", Op::xor_},      {"shl", Op::shl},
        {"shr", Op::shr},       {"selp", Op::selp},    {"setp", Op::setp},     {"cvt", Op::cvt},
        {"cvta", Op::cvta},     {"bfe", Op::bfe},      {"bfi", Op::bfi},       {"shfl", Op::shfl},
        {"bra", Op::bra},       {"ret", Op::ret},      {"exit", Op::ret},      {"call", Op::call},
        {"bar", Op::nop},       {"barrier", Op::nop},  {"membar", Op::nop},    {"fence", Op::nop},
        {"nanosleep", Op::nop}, {"prefetch", Op::nop}, {"prefetchu", Op::nop}, {"griddepcontrol", Op::nop},
        {"pmevent", Op::nop}};
    for (const auto& [name, op] : simple)
        if (in.opcode == name) d.op = op;
    if (in.opcode == "ld" || in.opcode == "ldu") {
        d.op = d.space == Space::param ? Op::ld_param : Op::access;
        d.access_op = AccessOp::load;
    } else if (in.opcode == "st") {
        d.op = Op::access;
        d.access_op = AccessOp::store;
    } else if (in.opcode == "atom" || in.opcode == "red") {
        d.op = Op::access;
        d.access_op = AccessOp::atomic;
    } else if (in.opcode == "ldmatrix" || in.opcode == "stmatrix" || in.opcode == "cp" || in.opcode == "st.async" ||
               in.opcode == "cp.async" || in.opcode == "tensormap" || in.opcode == "wgmma" || in.opcode == "tcgen05") {
        if (d.address_operand >= 0) {
            d.op = Op::access;
            d.access_op = in.opcode == "stmatrix" ? AccessOp::store : AccessOp::load;
            d.unmodelled = fmt::format("{} is not modelled", in.opcode);
        }
    }
    if (d.op == Op::access && d.address_operand < 0) d.op = Op::unknown;
    if ((d.op == Op::access || d.op == Op::ld_param) && (d.space == Space::param || d.space == Space::constant))
        d.op = d.space == Space::param && in.opcode == "ld" ? Op::ld_param : Op::unknown;
    return d;
}

std::string opcode_text(const Instruction& in)
{
    std::string s = in.opcode;
    for (const auto& m : in.modifiers) s += "." + m;
    return s;
}

/// One operand's values for the lanes of a warp.
struct Column {
    std::array<std::uint64_t, 32> v{};
    std::uint32_t known = 0;
    std::int32_t tag = 0;     ///< what the value addresses: kernel parameter + 1, -(shared variable + 1), local_tag
    std::int32_t origin = -1; ///< where an unknown lane's value came from: an instruction index
};

/// How a register written in a loop's body changes from one iteration to the next.
enum class Evolution : std::uint8_t {
    fixed,  ///< the same every iteration (computed from values the loop does not change, or a predicate)
    affine, ///< by the same amount every iteration, per lane (add, sub, a multiply by a fixed factor, copies)
    opaque, ///< never known (a float, a loaded value)
};

/// What the model knows of one loop without running it: the body from `head` to the backward
/// branch, whether it can be skipped ahead, and each register it writes.
struct LoopShape {
    bool skippable = false;
    std::vector<int> registers;       ///< written in the body, each exactly once
    std::vector<Evolution> evolution; ///< per entry of `registers`
    std::vector<std::uint8_t> bits;   ///< per entry of `registers`: the width its writer gives it
    std::vector<int> accesses;        ///< the body's memory instructions (indices into the tallies)
    std::map<int, std::size_t> slot;  ///< register id -> index into `registers`
};

/// The state of a warp at the end of one iteration of the loop being tracked.
struct LoopSnapshot {
    std::vector<std::uint64_t> value; ///< 32 per register of the shape
    std::vector<std::uint32_t> known;
    std::vector<std::int32_t> tag;
    std::vector<std::array<std::uint64_t, 5>> tally; ///< per access of the shape
    std::vector<bool> unpredicted;
    std::uint64_t instructions = 0;
};

/// What one execution of a body instruction saw in the iteration under way: its lanes, and for a
/// comparison its operands, for a memory instruction its addresses.
struct LoopStep {
    bool ran = false;
    std::uint32_t lanes = 0;
    Column a, b;
};

/// The loop the warp is in, followed iteration by iteration until two iterations repeat the one
/// before them.
struct LoopTrack {
    int head = -1, back_edge = -1;
    bool following = false; ///< the loop can be skipped, and the warp is in it
    int iterations = 0;     ///< snapshots taken
    int alike = 0;          ///< iterations in a row that repeated the one before them
    LoopSnapshot older, last;
    /// The figures and instruction counts at the end of the last iterations (at most 33), the latest last.
    std::deque<std::pair<std::vector<std::array<std::uint64_t, 5>>, std::uint64_t>> history;
    std::vector<LoopStep> previous, current; ///< per body instruction
};

} // namespace

struct WarpEvaluator::State {
    const PtxModule& module;
    const PtxKernel& kernel;
    const LaunchShape& launch;
    EvaluationBudget budget;
    std::vector<Decoded> code;
    std::vector<AccessPrediction> accesses;
    std::string unsupported;
    std::vector<std::uint64_t> shared_address;
    std::vector<std::uint64_t> local_address;
    std::vector<std::uint8_t> param_space;
    std::vector<std::uint8_t> param_known;
    std::vector<std::int32_t> param_tag; ///< per byte: the parameter whose value is a buffer's address

    // The warp being evaluated.
    std::vector<std::uint64_t> value;
    std::vector<std::uint32_t> known;
    std::vector<std::int32_t> tag, origin;
    std::array<std::uint32_t, 32> pc{};
    std::uint32_t live = 0;
    std::array<std::array<std::uint32_t, 32>, 4> tid{}; // x, y, z, lane
    std::array<std::uint32_t, 3> ctaid{};
    std::vector<AccessTally>* tallies = nullptr;
    std::map<std::pair<int, int>, LoopShape> loop_shapes; ///< by head and backward branch
    LoopTrack track;

    State(const PtxModule& m, const PtxKernel& k, const LaunchShape& l, const EvaluationBudget& b)
        : module(m), kernel(k), launch(l), budget(b)
    {
    }

    std::string where(int instruction) const
    {
        if (instruction < 0 || instruction >= static_cast<int>(kernel.instructions.size())) return "an unknown value";
        const auto& in = kernel.instructions[instruction];
        const std::string file = module.file_name(in.file);
        if (file.empty()) return fmt::format("{} (PTX line {})", opcode_text(in), in.ptx_line);
        return fmt::format("{} at {}:{}", opcode_text(in), file, in.line);
    }
    std::string because(int origin_instruction) const
    {
        return fmt::format("depends on {}", where(origin_instruction));
    }

    void prepare();
    Column read(const Operand& o, std::uint32_t lanes) const;
    void write(int reg, const Column& c, std::uint32_t lanes);
    void forget(const Instruction& in, std::uint32_t lanes, int from);
    Column compute(const Instruction& in, const Decoded& d, std::uint32_t lanes, int index);
    Column arithmetic(const Decoded& d, const Column& a, const Column& b, const Column& c, std::uint32_t lanes,
                      Op op) const;
    Column compare(const Instruction& in, const Decoded& d, std::uint32_t lanes) const;
    Column shuffle(const Instruction& in, std::uint32_t lanes, Column& valid) const;
    Column load_param(const Instruction& in, const Decoded& d, std::uint32_t lanes, int index) const;
    void execute_access(const Instruction& in, const Decoded& d, std::uint32_t lanes, std::uint32_t undecided,
                        int guard_origin, int index);
    WarpOutcome run(std::uint64_t budget_left);

    // Skipping loops ahead (loop_skip): what a loop's body allows, what each iteration saw, and the
    // jump to the next iteration that differs.
    const LoopShape& loop_shape(int head, int back_edge);
    void observe(int at, const Instruction& in, const Decoded& d, std::uint32_t run_lanes, std::uint32_t undecided);
    LoopSnapshot snapshot(const LoopShape& shape, std::uint64_t instructions) const;
    void back_edge(int at, int head, WarpOutcome& out);
    bool iterations_alike(const LoopShape& shape, const LoopSnapshot& now, std::uint64_t& skip,
                          std::uint64_t& period) const;
    void skip_ahead(const LoopShape& shape, const LoopSnapshot& now, std::uint64_t iterations, std::uint64_t period,
                    WarpOutcome& out);
};

void WarpEvaluator::State::prepare()
{
    code.reserve(kernel.instructions.size());
    for (std::size_t i = 0; i < kernel.instructions.size(); ++i) {
        const auto& in = kernel.instructions[i];
        Decoded d = decode(in);
        if (d.op == Op::access) {
            d.access = static_cast<int>(accesses.size());
            AccessPrediction a;
            a.instruction = static_cast<int>(i);
            a.ptx_line = in.ptx_line;
            a.file = module.file_name(in.file);
            a.line = in.line;
            a.opcode = opcode_text(in);
            a.bytes_per_lane = d.bytes;
            if (d.space == Space::global)
                a.kind = d.access_op == AccessOp::load    ? AccessKind::global_load
                         : d.access_op == AccessOp::store ? AccessKind::global_store
                                                          : AccessKind::global_atomic;
            else if (d.space == Space::shared)
                a.kind = d.access_op == AccessOp::load    ? AccessKind::shared_load
                         : d.access_op == AccessOp::store ? AccessKind::shared_store
                                                          : AccessKind::shared_atomic;
            else if (d.space == Space::local)
                a.kind = AccessKind::local;
            if (!d.unmodelled.empty()) {
                a.predicted = false;
                a.reason = d.unmodelled;
            }
            accesses.push_back(std::move(a));
        }
        code.push_back(std::move(d));
    }
    if (kernel.register_names.size() > budget.max_registers)
        unsupported = fmt::format("{} registers, more than the model's budget of {}", kernel.register_names.size(),
                                  budget.max_registers);
    // Shared variables one after another at their alignment, the dynamic ones after the static.
    std::uint64_t offset = 0;
    shared_address.resize(kernel.shared.size());
    for (int pass = 0; pass < 2; ++pass)
        for (std::size_t i = 0; i < kernel.shared.size(); ++i) {
            const auto& v = kernel.shared[i];
            if (v.dynamic != (pass == 1)) continue;
            offset = (offset + v.align - 1) / v.align * v.align;
            shared_address[i] = offset;
            offset += v.size;
        }
    offset = 0;
    local_address.resize(kernel.local.size());
    for (std::size_t i = 0; i < kernel.local.size(); ++i) {
        offset = (offset + kernel.local[i].align - 1) / kernel.local[i].align * kernel.local[i].align;
        local_address[i] = offset;
        offset += kernel.local[i].size;
    }
    // The parameter space as the launch fills it.
    std::uint64_t size = 0;
    for (const auto& p : kernel.params) size = std::max<std::uint64_t>(size, std::uint64_t{p.offset} + p.size);
    // A kernel's parameters take at most 32,764 bytes (CUDA 12.1 and later; 4,096 before).
    if (size > 32764)
        throw Error(ErrorKind::bad_input, fmt::format("{}: the parameters of {} take {} bytes, more than a kernel's "
                                                      "32764",
                                                      module.origin, kernel.name, size));
    param_space.assign(size, 0);
    param_known.assign(size, 0);
    param_tag.assign(size, 0);
    for (std::size_t i = 0; i < kernel.params.size() && i < launch.args.size(); ++i) {
        const auto& p = kernel.params[i];
        const auto& arg = launch.args[i];
        if (p.size > 8) continue; // aggregates are not passed by the suites: unknown
        for (std::uint32_t b = 0; b < p.size; ++b) {
            param_space[p.offset + b] = static_cast<std::uint8_t>(arg.value >> (8 * b));
            param_known[p.offset + b] = 1;
            if (arg.kind == KernelArgument::Kind::buffer) param_tag[p.offset + b] = static_cast<std::int32_t>(i) + 1;
        }
    }
}

Column WarpEvaluator::State::read(const Operand& o, std::uint32_t lanes) const
{
    Column c;
    switch (o.kind) {
    case OperandKind::reg: {
        const std::size_t base = static_cast<std::size_t>(o.reg) * 32;
        std::copy_n(value.begin() + static_cast<std::ptrdiff_t>(base), 32, c.v.begin());
        c.known = known[o.reg] & lanes;
        c.tag = tag[o.reg];
        c.origin = origin[o.reg];
        if (o.negated)
            for (auto& x : c.v) x = x == 0;
        return c;
    }
    case OperandKind::imm:
        c.v.fill(static_cast<std::uint64_t>(o.value));
        c.known = lanes;
        return c;
    case OperandKind::special: {
        const auto s = static_cast<int>(o.special);
        if (s <= static_cast<int>(SpecialRegister::tid_z)) {
            c.v = {};
            for (int l = 0; l < 32; ++l) c.v[l] = tid[s][l];
        } else if (s <= static_cast<int>(SpecialRegister::ntid_z)) {
            c.v.fill(launch.block[s - 3]);
        } else if (s <= static_cast<int>(SpecialRegister::ctaid_z)) {
            c.v.fill(ctaid[s - 6]);
        } else if (s <= static_cast<int>(SpecialRegister::nctaid_z)) {
            c.v.fill(launch.grid[s - 9]);
        } else if (o.special == SpecialRegister::laneid) {
            for (int l = 0; l < 32; ++l) c.v[l] = static_cast<std::uint64_t>(l);
        } else {
            c.origin = -2;
            return c;
        }
        c.known = lanes;
        return c;
    }
    case OperandKind::symbol:
        for (std::size_t i = 0; i < kernel.shared.size(); ++i)
            if (kernel.shared[i].name == o.symbol) {
                c.v.fill(shared_address[i]);
                c.known = lanes;
                c.tag = -static_cast<std::int32_t>(i) - 1;
                return c;
            }
        for (std::size_t i = 0; i < kernel.local.size(); ++i)
            if (kernel.local[i].name == o.symbol) {
                c.v.fill(local_address[i]);
                c.known = lanes;
                c.tag = local_tag;
                return c;
            }
        return c;
    default: return c;
    }
}

void WarpEvaluator::State::write(int reg, const Column& c, std::uint32_t lanes)
{
    if (reg < 0) return;
    const std::size_t base = static_cast<std::size_t>(reg) * 32;
    for (std::uint32_t m = lanes; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        value[base + l] = c.v[l];
    }
    known[reg] = (known[reg] & ~lanes) | (c.known & lanes);
    tag[reg] = c.tag;
    if ((c.known & lanes) != lanes) origin[reg] = c.origin;
}

/// The destinations of `in` become unknown in `lanes`, as computed from the instruction `from`.
void WarpEvaluator::State::forget(const Instruction& in, std::uint32_t lanes, int from)
{
    Column unknown;
    unknown.origin = from;
    if (in.operands.empty()) return;
    const Operand& dest = in.operands[0];
    if (dest.kind == OperandKind::reg) write(dest.reg, unknown, lanes);
    if (dest.second_reg >= 0) write(dest.second_reg, unknown, lanes);
    if (dest.kind == OperandKind::vector)
        for (const int r : dest.regs) write(r, unknown, lanes);
}

Column WarpEvaluator::State::arithmetic(const Decoded& d, const Column& a, const Column& b, const Column& c,
                                        std::uint32_t lanes, Op op) const
{
    Column r;
    const int bits = d.type.bits == 0 ? 64 : d.type.bits;
    const int out_bits = d.wide ? std::min(64, 2 * bits) : bits;
    const bool three = op == Op::mad || op == Op::bfi || op == Op::bfe;
    r.known = a.known & b.known & (three ? c.known : lanes) & lanes;
    if (bits > 64) r.known = 0; // a value wider than a register word: not modelled
    r.origin = (a.known & lanes) != lanes ? a.origin : (b.known & lanes) != lanes ? b.origin : c.origin;
    // A pointer plus an offset still points into its buffer; pointer minus pointer is a plain number.
    const std::int32_t t2 = op == Op::mad ? c.tag : b.tag;
    r.tag = op == Op::mul || op == Op::div || op == Op::rem ? 0 : a.tag != 0 ? (t2 != 0 ? 0 : a.tag) : t2;
    if (op == Op::sub && a.tag != 0 && a.tag == b.tag) r.tag = 0;
    const std::uint64_t mask = mask_of(out_bits);
    for (std::uint32_t m = r.known; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        const std::uint64_t x = a.v[l] & mask_of(bits), y = b.v[l] & mask_of(bits), z = c.v[l];
        const std::int64_t sx = sext(x, bits), sy = sext(y, bits);
        std::uint64_t v = 0;
        bool ok = true;
        switch (op) {
        case Op::add: v = x + y; break;
        case Op::sub: v = x - y; break;
        case Op::mul:
        case Op::mad: {
            if (d.wide) // the product's low 64 bits, the same for signed and unsigned operands
                v = d.type.sign ? static_cast<std::uint64_t>(sx) * static_cast<std::uint64_t>(sy) : x * y;
            else if (d.hi)
                v = d.type.sign ? static_cast<std::uint64_t>(static_cast<int128>(sx) * sy >> bits)
                                : static_cast<std::uint64_t>(static_cast<uint128>(x) * y >> bits);
            else
                v = x * y;
            if (op == Op::mad) v += z;
            break;
        }
        case Op::div:
        case Op::rem:
            if (y == 0 || (d.type.sign && sy == -1 && sx == sext(std::uint64_t{1} << (bits - 1), bits))) {
                ok = false;
                break;
            }
            if (d.type.sign)
                v = static_cast<std::uint64_t>(op == Op::div ? sx / sy : sx % sy);
            else
                v = op == Op::div ? x / y : x % y;
            break;
        case Op::min: v = d.type.sign ? static_cast<std::uint64_t>(std::min(sx, sy)) : std::min(x, y); break;
        case Op::max: v = d.type.sign ? static_cast<std::uint64_t>(std::max(sx, sy)) : std::max(x, y); break;
        case Op::abs: v = sx < 0 ? 0 - static_cast<std::uint64_t>(sx) : static_cast<std::uint64_t>(sx); break;
        case Op::neg: v = 0 - static_cast<std::uint64_t>(sx); break;
        case Op::not_: v = d.type.pred ? (x == 0) : ~x; break;
        case Op::and_: v = x & y; break;
        case Op::or_: v = x | y; break;
        case Op::xor_: v = x ^ y; break;
        case Op::shl: v = (b.v[l] & 0xffffffffu) >= static_cast<std::uint64_t>(bits) ? 0 : x << (b.v[l] & 63); break;
        case Op::shr: {
            const std::uint64_t n = b.v[l] & 0xffffffffu;
            if (d.type.sign)
                v = static_cast<std::uint64_t>(sx >> std::min<std::uint64_t>(n, bits - 1));
            else
                v = n >= static_cast<std::uint64_t>(bits) ? 0 : x >> n;
            break;
        }
        case Op::bfe: {
            const std::uint64_t pos = b.v[l] & 0xff, len = z & 0xff;
            if (len == 0)
                v = 0;
            else if (pos >= static_cast<std::uint64_t>(bits))
                v = d.type.sign && sx < 0 ? ~std::uint64_t{0} : 0;
            else {
                v = x >> pos;
                const int top = static_cast<int>(std::min<std::uint64_t>(pos + len, bits) - pos);
                v = d.type.sign ? static_cast<std::uint64_t>(sext(v, top)) : v & mask_of(top);
            }
            break;
        }
        default: ok = false; break;
        }
        if (ok)
            r.v[l] = v & mask;
        else
            r.known &= ~(1u << l);
    }
    if ((r.known & lanes) != lanes && r.origin < 0) r.origin = -3;
    return r;
}

Column WarpEvaluator::State::compare(const Instruction& in, const Decoded& d, std::uint32_t lanes) const
{
    const Column a = read(in.operands[1], lanes), b = read(in.operands[2], lanes);
    Column r;
    r.known = a.known & b.known & lanes;
    r.origin = (a.known & lanes) != lanes ? a.origin : b.origin;
    if (d.type.flt || d.cmp == Cmp::none) {
        r.known = 0;
        r.origin = -3;
    }
    const int bits = d.type.bits;
    if (bits == 0 || bits > 64) r.known = 0; // no type, or wider than a register word: not modelled
    const bool sign = d.type.sign && !d.unsigned_cmp;
    for (std::uint32_t m = r.known; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        const std::uint64_t x = a.v[l] & mask_of(bits), y = b.v[l] & mask_of(bits);
        const std::int64_t sx = sext(x, bits), sy = sext(y, bits);
        bool t = false;
        switch (d.cmp) {
        case Cmp::eq: t = x == y; break;
        case Cmp::ne: t = x != y; break;
        case Cmp::lt: t = sign ? sx < sy : x < y; break;
        case Cmp::le: t = sign ? sx <= sy : x <= y; break;
        case Cmp::gt: t = sign ? sx > sy : x > y; break;
        case Cmp::ge: t = sign ? sx >= sy : x >= y; break;
        case Cmp::none: break;
        }
        r.v[l] = t;
    }
    if (d.combine != 0 && in.operands.size() > 3) {
        const Column c = read(in.operands[3], lanes);
        if ((c.known & lanes) != lanes && (r.known & lanes) == lanes) r.origin = c.origin;
        r.known &= c.known;
        for (int l = 0; l < 32; ++l)
            r.v[l] = d.combine == 1 ? (r.v[l] && c.v[l]) : d.combine == 2 ? (r.v[l] || c.v[l]) : (r.v[l] != c.v[l]);
    }
    return r;
}

/// shfl.sync.mode.b32 d|p, a, b, c, membermask: lane j's `a`, with PTX's rules for j and p.
Column WarpEvaluator::State::shuffle(const Instruction& in, std::uint32_t lanes, Column& valid) const
{
    const Column a = read(in.operands[1], lanes), b = read(in.operands[2], lanes), c = read(in.operands[3], lanes);
    const int mode = code[&in - kernel.instructions.data()].shfl_mode;
    Column r;
    r.origin = a.origin;
    valid = Column{};
    for (std::uint32_t m = lanes & b.known & c.known; m != 0; m &= m - 1) {
        const int lane = std::countr_zero(m);
        const std::uint32_t bval = static_cast<std::uint32_t>(b.v[lane]) & 31,
                            cval = static_cast<std::uint32_t>(c.v[lane]);
        const std::uint32_t segmask = (cval >> 8) & 31, clamp = cval & 31;
        const std::uint32_t min_lane = static_cast<std::uint32_t>(lane) & segmask;
        const std::uint32_t max_lane = min_lane | (clamp & ~segmask);
        std::int64_t j = lane;
        bool p = false;
        switch (mode) {
        case 0:
            j = lane - static_cast<std::int64_t>(bval);
            p = j >= static_cast<std::int64_t>(max_lane);
            break;
        case 1:
            j = lane + static_cast<std::int64_t>(bval);
            p = j <= static_cast<std::int64_t>(max_lane);
            break;
        case 2:
            j = lane ^ static_cast<std::int64_t>(bval);
            p = j <= static_cast<std::int64_t>(max_lane);
            break;
        default:
            j = static_cast<std::int64_t>(min_lane | (bval & ~segmask));
            p = j <= static_cast<std::int64_t>(max_lane);
            break;
        }
        if (!p) j = lane;
        valid.v[lane] = p;
        valid.known |= 1u << lane;
        if (j >= 0 && j < 32 && (lanes >> j & 1u) && (a.known >> j & 1u)) {
            r.v[lane] = a.v[j];
            r.known |= 1u << lane;
        }
    }
    r.tag = a.tag;
    if (r.origin < 0) r.origin = -3;
    return r;
}

Column WarpEvaluator::State::load_param(const Instruction& in, const Decoded& d, std::uint32_t lanes, int index) const
{
    Column r;
    r.origin = index;
    if (d.address_operand < 0 || static_cast<std::size_t>(d.address_operand) >= in.operands.size()) return r;
    const Operand& at = in.operands[static_cast<std::size_t>(d.address_operand)];
    if (at.value < -(std::int64_t{1} << 40) || at.value > (std::int64_t{1} << 40)) return r;
    std::int64_t offset = at.value;
    bool found = false;
    for (const auto& p : kernel.params)
        if (p.name == at.symbol) {
            offset += p.offset;
            found = true;
        }
    const std::uint32_t bytes = std::max<std::uint32_t>(1, d.type.bits / 8);
    if (!found || offset < 0 || static_cast<std::uint64_t>(offset) + bytes > param_space.size() || d.bytes != bytes ||
        bytes > 8) // a value wider than a register word: unknown
        return r;
    std::uint64_t v = 0;
    for (std::uint32_t b = 0; b < bytes; ++b) {
        if (!param_known[static_cast<std::size_t>(offset) + b]) return r;
        v |= std::uint64_t{param_space[static_cast<std::size_t>(offset) + b]} << (8 * b);
    }
    r.v.fill(v);
    r.known = lanes;
    r.tag = bytes == 8 ? param_tag[static_cast<std::size_t>(offset)] : 0;
    return r;
}

Column WarpEvaluator::State::compute(const Instruction& in, const Decoded& d, std::uint32_t lanes, int index)
{
    const auto operand = [&](std::size_t i) {
        if (i >= in.operands.size()) {
            Column c;
            c.origin = index;
            return c;
        }
        return read(in.operands[i], lanes);
    };
    Column none;
    none.origin = index;
    switch (d.op) {
    case Op::mov:
    case Op::cvta: {
        if (in.operands.size() < 2 || in.operands[1].kind == OperandKind::vector) return none;
        Column c = operand(1);
        if (in.operands[1].kind == OperandKind::symbol && c.known == 0) c.origin = index;
        return c;
    }
    case Op::cvt: {
        if (d.type.flt || d.src.flt || d.src.bits == 0 || d.src.bits > 64 || d.type.bits > 64 || d.saturate)
            return none;
        Column c = operand(1);
        for (int l = 0; l < 32; ++l) {
            const std::uint64_t x =
                d.src.sign ? static_cast<std::uint64_t>(sext(c.v[l], d.src.bits)) : c.v[l] & mask_of(d.src.bits);
            c.v[l] = x & mask_of(d.type.bits);
        }
        return c;
    }
    case Op::selp: {
        const Column a = operand(1), b = operand(2), p = operand(3);
        Column r;
        r.origin = (p.known & lanes) != lanes ? p.origin : (a.known & lanes) != lanes ? a.origin : b.origin;
        r.tag = a.tag != 0 ? a.tag : b.tag;
        for (std::uint32_t m = p.known & lanes; m != 0; m &= m - 1) {
            const int l = std::countr_zero(m);
            const Column& chosen = p.v[l] ? a : b;
            r.v[l] = chosen.v[l];
            if (chosen.known >> l & 1u) r.known |= 1u << l;
        }
        return r;
    }
    case Op::setp: return in.operands.size() >= 3 ? compare(in, d, lanes) : none;
    case Op::ld_param: return load_param(in, d, lanes, index);
    case Op::bfi: {
        const Column f = operand(1), b = operand(2), pos = operand(3), len = operand(4);
        Column r = arithmetic(d, f, b, pos, lanes, Op::add);
        r.known = d.type.bits > 64 ? 0 : f.known & b.known & pos.known & len.known & lanes;
        r.tag = 0;
        for (std::uint32_t m = r.known; m != 0; m &= m - 1) {
            const int l = std::countr_zero(m);
            const std::uint64_t p = pos.v[l] & 0xff, n = len.v[l] & 0xff;
            if (n == 0 || p >= d.type.bits) {
                r.v[l] = b.v[l] & mask_of(d.type.bits);
                continue;
            }
            const std::uint64_t field = mask_of(static_cast<int>(std::min<std::uint64_t>(n, 64))) << p;
            r.v[l] = ((b.v[l] & ~field) | ((f.v[l] << p) & field)) & mask_of(d.type.bits);
        }
        return r;
    }
    case Op::add:
    case Op::sub:
    case Op::mul:
    case Op::mad:
    case Op::div:
    case Op::rem:
    case Op::min:
    case Op::max:
    case Op::and_:
    case Op::or_:
    case Op::xor_:
    case Op::shl:
    case Op::shr:
    case Op::bfe:
        if (d.type.flt || in.operands.size() < 3) return none;
        return arithmetic(d, operand(1), operand(2), operand(3), lanes, d.op);
    case Op::abs:
    case Op::neg:
    case Op::not_: {
        if (d.type.flt || in.operands.size() < 2) return none;
        Column b;
        b.known = lanes;
        return arithmetic(d, operand(1), b, b, lanes, d.op);
    }
    default: return none;
    }
}

void WarpEvaluator::State::execute_access(const Instruction& in, const Decoded& d, std::uint32_t lanes,
                                          std::uint32_t undecided, int guard_origin, int index)
{
    AccessTally& t = (*tallies)[static_cast<std::size_t>(d.access)];
    if (d.access_op != AccessOp::store) forget(in, lanes | undecided, index);
    if (t.unpredicted || !accesses[static_cast<std::size_t>(d.access)].predicted) return;
    const auto give_up = [&](std::string reason) {
        t.unpredicted = true;
        t.reason = std::move(reason);
    };
    if (undecided != 0) return give_up("whether it runs " + because(guard_origin));
    if (lanes == 0) return;
    const Operand& at = in.operands[static_cast<std::size_t>(d.address_operand)];
    Column base;
    if (at.reg >= 0)
        base = read(register_operand(at.reg), lanes);
    else if (!at.symbol.empty())
        base = read(symbol_operand(at.symbol), lanes);
    else {
        base.known = lanes;
        base.v.fill(0);
    }
    if ((base.known & lanes) != lanes) return give_up("its address " + because(base.origin));
    Space space = d.space;
    if (space == Space::generic)
        space = base.tag > 0            ? Space::global
                : base.tag == local_tag ? Space::local
                : base.tag < 0          ? Space::shared
                                        : Space::other;
    if (space == Space::other) return give_up("its generic address points into no buffer the model knows");
    AccessKind kind = AccessKind::local;
    if (space == Space::global)
        kind = d.access_op == AccessOp::load    ? AccessKind::global_load
               : d.access_op == AccessOp::store ? AccessKind::global_store
                                                : AccessKind::global_atomic;
    else if (space == Space::shared)
        kind = d.access_op == AccessOp::load    ? AccessKind::shared_load
               : d.access_op == AccessOp::store ? AccessKind::shared_store
                                                : AccessKind::shared_atomic;
    std::string buffer;
    if (base.tag > 0) {
        const auto i = static_cast<std::size_t>(base.tag - 1);
        buffer = i < launch.args.size() && !launch.args[i].name.empty() ? launch.args[i].name : kernel.params[i].name;
    } else if (base.tag < 0 && base.tag != local_tag) {
        buffer = kernel.shared[static_cast<std::size_t>(-base.tag - 1)].name;
    }
    if (t.requests == 0 && t.kind == AccessKind::other) {
        t.kind = kind;
        t.buffer = buffer;
    } else if (t.kind != kind || t.buffer != buffer) {
        return give_up("its address points into different buffers from one execution to the next");
    }
    std::array<std::uint64_t, 32> addresses{};
    for (std::uint32_t m = lanes; m != 0; m &= m - 1) {
        const int l = std::countr_zero(m);
        addresses[l] = base.v[l] + static_cast<std::uint64_t>(at.value);
    }
    ++t.requests;
    if (is_global(kind)) {
        const Sectors s = global_sectors(addresses, lanes, d.bytes);
        t.sectors += s.actual;
        t.ideal_sectors += s.ideal;
    } else if (is_shared(kind)) {
        const Wavefronts w = shared_wavefronts(addresses, lanes, d.bytes);
        t.wavefronts += w.actual;
        t.ideal_wavefronts += w.ideal;
    }
}

// Skipping loops ahead. A loop whose body the model can follow without running it (no inner loop,
// call or shuffle; every register written once, by an operation that keeps it affine in the
// iteration or never knows it) is followed iteration by iteration; once two iterations repeat the
// one before them exactly (the same lanes at every instruction, every register changed by the same
// amount, every access's figures the same and its addresses moved by whole sectors or banks), the
// iterations up to the next one that can differ are skipped: the first at which a comparison in
// the body changes its result, or a register would wrap around. Their figures are added per
// iteration skipped, and the next iteration is evaluated again.

namespace {

/// The registers `in` writes: its destination, a second destination (setp, shfl), a vector's elements.
void written_registers(const Instruction& in, std::vector<int>& out)
{
    if (in.operands.empty()) return;
    const Operand& dest = in.operands[0];
    if (dest.kind == OperandKind::reg && dest.reg >= 0) out.push_back(dest.reg);
    if (dest.second_reg >= 0) out.push_back(dest.second_reg);
    if (dest.kind == OperandKind::vector)
        for (const int r : dest.regs)
            if (r >= 0) out.push_back(r);
}

/// The registers `in` reads: its sources, an address's base, its guard.
void read_registers(const Instruction& in, std::vector<int>& out)
{
    for (std::size_t i = 0; i < in.operands.size(); ++i) {
        const Operand& o = in.operands[i];
        if (i == 0 && (o.kind == OperandKind::reg || o.kind == OperandKind::vector)) continue; // the destination
        if ((o.kind == OperandKind::reg || o.kind == OperandKind::address) && o.reg >= 0) out.push_back(o.reg);
        if (o.kind == OperandKind::vector)
            for (const int r : o.regs)
                if (r >= 0) out.push_back(r);
    }
    if (in.guard >= 0) out.push_back(in.guard);
}

/// An instruction whose result the model never knows: float arithmetic, a loaded value, an
/// operation it does not evaluate.
bool never_known(const Decoded& d)
{
    if (d.op == Op::mov || d.op == Op::selp || d.op == Op::cvta) return false; // copies: known when their source is
    return d.type.flt || d.op == Op::unknown || (d.op == Op::access && d.access_op != AccessOp::store);
}

/// A float, or a value the model never knows.
bool float_result(const Decoded& d)
{
    return d.type.flt || never_known(d);
}

int128 ceil_div(int128 a, int128 b) // a >= 0, b > 0
{
    return (a + b - 1) / b;
}

/// The first iteration ahead (1 or more) at which a comparison of `diff + m * slope` with zero gives
/// another result than at m = 0; 0 when none does.
int128 first_change(Cmp cmp, int128 diff, int128 slope)
{
    switch (cmp) {
    case Cmp::lt:
    case Cmp::ge: // diff < 0
        if (diff < 0) return slope > 0 ? ceil_div(-diff, slope) : 0;
        return slope < 0 ? diff / -slope + 1 : 0;
    case Cmp::le:
    case Cmp::gt: // diff <= 0
        if (diff <= 0) return slope > 0 ? -diff / slope + 1 : 0;
        return slope < 0 ? ceil_div(diff, -slope) : 0;
    case Cmp::eq:
    case Cmp::ne:
        if (diff == 0) return slope != 0 ? 1 : 0;
        if (slope == 0 || (-diff) % slope != 0 || (-diff) / slope <= 0) return 0;
        return (-diff) / slope;
    case Cmp::none: break;
    }
    return 0;
}

/// How many steps of `delta` a `bits`-wide value may take from `v` without wrapping around, read
/// as unsigned or as signed.
int128 steps_without_wrap(std::uint64_t v, std::int64_t delta, int bits)
{
    if (delta == 0) return std::numeric_limits<std::int64_t>::max();
    const int128 top = bits >= 64 ? (int128{1} << 64) : (int128{1} << bits);
    const int128 u = v & mask_of(bits), s = sext(v, bits), d = delta;
    const int128 half = top / 2;
    const int128 unsigned_steps = d > 0 ? (top - 1 - u) / d : u / -d;
    const int128 signed_steps = d > 0 ? (half - 1 - s) / d : (s + half) / -d;
    return std::min(unsigned_steps, signed_steps);
}

} // namespace

const LoopShape& WarpEvaluator::State::loop_shape(int head, int back_edge)
{
    const auto key = std::make_pair(head, back_edge);
    if (const auto it = loop_shapes.find(key); it != loop_shapes.end()) return it->second;
    LoopShape& shape = loop_shapes[key];
    std::vector<int> writer, regs;
    std::set<std::size_t> floats; // registers written more than once, as floats
    for (int i = head; i <= back_edge; ++i) {
        const Instruction& in = kernel.instructions[static_cast<std::size_t>(i)];
        const Decoded& d = code[static_cast<std::size_t>(i)];
        if (back_edge - head >= 4096) return shape; // a body too long to follow step by step
        if (d.op == Op::call || d.op == Op::shfl || d.op == Op::ret) return shape;
        if (d.op == Op::bra && (in.target < 0 || (i != back_edge && in.target <= i))) return shape; // an inner loop
        if (d.op == Op::access) shape.accesses.push_back(d.access);
        regs.clear();
        written_registers(in, regs);
        for (const int r : regs) {
            const auto [it, added] = shape.slot.emplace(r, shape.registers.size());
            if (!added) {
                // Written twice: only as a float (a sum, a value loaded or a constant), by every writer.
                // The model knows a float only as a constant: the same in every iteration.
                if (!float_result(d) || !float_result(code[static_cast<std::size_t>(writer[it->second])])) return shape;
                floats.insert(it->second);
                continue;
            }
            shape.registers.push_back(r);
            writer.push_back(i);
        }
    }
    // Varying: written from a value the loop changes (the greatest such set); predicates change
    // only where a comparison changes its result, which the skip finds.
    const std::size_t n = shape.registers.size();
    std::vector<bool> varying(n, true);
    for (std::size_t k = 0; k < n; ++k) {
        const Decoded& d = code[static_cast<std::size_t>(writer[k])];
        if (d.op == Op::setp || d.type.pred || floats.count(k) != 0) varying[k] = false;
    }
    const auto varies = [&](const Operand& o) {
        if (o.kind != OperandKind::reg) return false;
        const auto it = shape.slot.find(o.reg);
        return it != shape.slot.end() && varying[it->second];
    };
    for (bool changed = true; changed;) {
        changed = false;
        for (std::size_t k = 0; k < n; ++k) {
            if (!varying[k]) continue;
            regs.clear();
            read_registers(kernel.instructions[static_cast<std::size_t>(writer[k])], regs);
            const bool any = std::any_of(regs.begin(), regs.end(), [&](int r) {
                const auto it = shape.slot.find(r);
                return it != shape.slot.end() && varying[it->second];
            });
            if (!any) varying[k] = false, changed = true;
        }
    }
    shape.evolution.assign(n, Evolution::fixed);
    shape.bits.assign(n, 64);
    for (std::size_t k = 0; k < n; ++k) {
        const Instruction& in = kernel.instructions[static_cast<std::size_t>(writer[k])];
        const Decoded& d = code[static_cast<std::size_t>(writer[k])];
        const int bits = d.type.bits == 0 ? 64 : d.wide ? 2 * d.type.bits : d.type.bits;
        shape.bits[k] = static_cast<std::uint8_t>(std::min(64, bits));
        if (!varying[k]) continue;
        const auto operand_varies = [&](std::size_t i) { return i < in.operands.size() && varies(in.operands[i]); };
        Evolution e = Evolution::opaque; // floats, loaded values, what the model does not evaluate
        const bool copy = d.op == Op::mov || d.op == Op::cvta || d.op == Op::selp;
        if (copy)
            e = Evolution::affine;
        else if (d.type.flt || d.op == Op::access || d.op == Op::unknown || d.op == Op::ld_param)
            e = Evolution::opaque;
        else if (d.op == Op::add || d.op == Op::sub || d.op == Op::neg || d.op == Op::cvt)
            e = d.src.flt ? Evolution::opaque : Evolution::affine;
        else if ((d.op == Op::mul || d.op == Op::mad) && !d.hi && !(operand_varies(1) && operand_varies(2)))
            e = Evolution::affine;
        else if (d.op == Op::shl && !operand_varies(2))
            e = Evolution::affine;
        else
            return shape; // a value that changes in no affine way
        shape.evolution[k] = e;
    }
    for (const std::size_t k : floats) shape.evolution[k] = Evolution::fixed;
    shape.skippable = true;
    return shape;
}

void WarpEvaluator::State::observe(int at, const Instruction& in, const Decoded& d, std::uint32_t run_lanes,
                                   std::uint32_t undecided)
{
    if (at < track.head || at > track.back_edge || undecided != 0) {
        track = LoopTrack{}; // the warp left the loop, or a lane's path is not known
        return;
    }
    LoopStep& step = track.current[static_cast<std::size_t>(at - track.head)];
    if (step.ran) {
        track = LoopTrack{}; // twice in one iteration
        return;
    }
    step.ran = true;
    step.lanes = run_lanes;
    if (d.op == Op::setp && in.operands.size() >= 3) {
        step.a = read(in.operands[1], run_lanes);
        step.b = read(in.operands[2], run_lanes);
    } else if (d.op == Op::access && d.address_operand >= 0) {
        const Operand& address = in.operands[static_cast<std::size_t>(d.address_operand)];
        if (address.reg >= 0) step.a = read(register_operand(address.reg), run_lanes);
    }
}

LoopSnapshot WarpEvaluator::State::snapshot(const LoopShape& shape, std::uint64_t instructions) const
{
    LoopSnapshot s;
    s.instructions = instructions;
    s.value.reserve(shape.registers.size() * 32);
    for (const int r : shape.registers) {
        const auto base = value.begin() + static_cast<std::ptrdiff_t>(r) * 32;
        s.value.insert(s.value.end(), base, base + 32);
        s.known.push_back(known[static_cast<std::size_t>(r)]);
        s.tag.push_back(tag[static_cast<std::size_t>(r)]);
    }
    for (const int a : shape.accesses) {
        const AccessTally& t = (*tallies)[static_cast<std::size_t>(a)];
        s.tally.push_back({t.requests, t.sectors, t.ideal_sectors, t.wavefronts, t.ideal_wavefronts});
        s.unpredicted.push_back(t.unpredicted);
    }
    return s;
}

/// Whether the iteration that ended at `now` repeated the one before it (the same lanes at every
/// instruction, every register changed by the same amount). If so, `skip`: the iterations that may
/// be skipped from `now`, up to (not including) the first that can differ, a whole number of
/// `period`s, the iterations after which every access's addresses have moved by whole sectors or
/// banks; 0 when none may be.
bool WarpEvaluator::State::iterations_alike(const LoopShape& shape, const LoopSnapshot& now, std::uint64_t& skip,
                                            std::uint64_t& period) const
{
    skip = 0;
    period = 1;
    const LoopSnapshot &s1 = track.older, &s2 = track.last, &s3 = now;
    if (s3.instructions - s2.instructions != s2.instructions - s1.instructions) return false;
    if (s1.known != s3.known || s2.known != s3.known || s1.tag != s3.tag || s2.tag != s3.tag) return false;
    if (s1.unpredicted != s3.unpredicted || s2.unpredicted != s3.unpredicted) return false;
    for (std::size_t i = 0; i < track.current.size(); ++i)
        if (track.current[i].ran != track.previous[i].ran || track.current[i].lanes != track.previous[i].lanes)
            return false;
    // A lane's change of register `k` from the second to the third iteration, as a signed number.
    const auto delta = [&](std::size_t k, int l) {
        const std::size_t at = k * 32 + static_cast<std::size_t>(l);
        return sext(s3.value[at] - s2.value[at], shape.bits[k]);
    };
    int128 steps = std::numeric_limits<std::int64_t>::max();
    for (std::size_t k = 0; k < shape.registers.size(); ++k) {
        const std::uint64_t mask = mask_of(shape.bits[k]);
        if (shape.evolution[k] == Evolution::opaque && s3.known[k] != 0) return false;
        for (std::uint32_t m = s3.known[k]; m != 0; m &= m - 1) {
            const int l = std::countr_zero(m);
            const std::size_t at = k * 32 + static_cast<std::size_t>(l);
            const std::uint64_t d2 = (s3.value[at] - s2.value[at]) & mask, d1 = (s2.value[at] - s1.value[at]) & mask;
            if (d1 != d2 || (shape.evolution[k] == Evolution::fixed && d2 != 0)) return false;
            steps = std::min(steps, steps_without_wrap(s3.value[at], delta(k, l), shape.bits[k]));
        }
    }
    // An operand's change per iteration in lane l: its register's, or none.
    const auto operand_delta = [&](const Operand& o, int l) -> std::int64_t {
        if (o.kind != OperandKind::reg && o.kind != OperandKind::address) return false;
        const auto it = shape.slot.find(o.reg);
        return it == shape.slot.end() ? 0 : delta(it->second, l);
    };
    int128 change = 0; // the first iteration ahead at which a comparison changes; 0: none found
    for (std::size_t i = 0; i < track.current.size(); ++i) {
        const LoopStep& step = track.current[i];
        if (!step.ran || step.lanes == 0) continue;
        const int index = track.head + static_cast<int>(i);
        const Instruction& in = kernel.instructions[static_cast<std::size_t>(index)];
        const Decoded& d = code[static_cast<std::size_t>(index)];
        if (d.op == Op::access && d.address_operand >= 0) {
            // Figures repeat only if every lane's address moves by the same whole sectors or banks.
            const Operand& address = in.operands[static_cast<std::size_t>(d.address_operand)];
            const AccessTally& t = (*tallies)[static_cast<std::size_t>(d.access)];
            std::optional<std::int64_t> moved;
            for (std::uint32_t m = step.lanes; m != 0; m &= m - 1) {
                const std::int64_t by = operand_delta(address, std::countr_zero(m));
                if (moved && *moved != by) return false;
                moved = by;
            }
            // A global access's sectors repeat once its addresses have moved by whole sectors, a shared
            // one's wavefronts once they have moved by whole words (the banks turn round together).
            const std::int64_t unit = is_global(t.kind) ? 32 : is_shared(t.kind) ? 4 : 1;
            if (moved) {
                const auto by = static_cast<std::uint64_t>(*moved < 0 ? -(*moved % unit) : *moved % unit);
                period =
                    std::lcm(period, static_cast<std::uint64_t>(unit) / std::gcd(by, static_cast<std::uint64_t>(unit)));
                if (period > 32) return false;
            }
        } else if (d.op == Op::setp && in.operands.size() >= 3) {
            const int bits = d.type.bits;
            if (bits == 0 || bits > 64 || d.type.flt || (step.a.known & step.lanes) != step.lanes ||
                (step.b.known & step.lanes) != step.lanes)
                return false;
            const bool sign = d.type.sign && !d.unsigned_cmp;
            for (std::uint32_t m = step.lanes; m != 0; m &= m - 1) {
                const int l = std::countr_zero(m);
                const auto as_number = [&](std::uint64_t v) -> int128 {
                    return sign ? int128{sext(v, bits)} : int128{v & mask_of(bits)};
                };
                const int128 diff = as_number(step.a.v[l]) - as_number(step.b.v[l]);
                const int128 slope = int128{sext(static_cast<std::uint64_t>(operand_delta(in.operands[1], l)), bits)} -
                                     sext(static_cast<std::uint64_t>(operand_delta(in.operands[2], l)), bits);
                const int128 at = first_change(d.cmp, diff, slope);
                if (at > 0 && (change == 0 || at < change)) change = at;
            }
        }
    }
    if (change == 0) return true; // nothing in the body ends the loop: it is left to the budget
    steps = std::min(steps, change - 1);
    const auto p = static_cast<std::int64_t>(period);
    if (steps >= p) skip = static_cast<std::uint64_t>(std::min<int128>(steps, int128{1} << 40) / p * p);
    return true;
}

void WarpEvaluator::State::skip_ahead(const LoopShape& shape, const LoopSnapshot& now, std::uint64_t iterations,
                                      std::uint64_t period, WarpOutcome& out)
{
    // The figures of the last `period` iterations, which every later window of as many repeats.
    const auto& window_start = track.history[track.history.size() - 1 - period];
    const LoopSnapshot& before = track.last;
    for (std::size_t k = 0; k < shape.registers.size(); ++k) {
        if (shape.evolution[k] != Evolution::affine) continue;
        const std::size_t r = static_cast<std::size_t>(shape.registers[k]);
        for (std::uint32_t m = now.known[k]; m != 0; m &= m - 1) {
            const int l = std::countr_zero(m);
            const std::size_t at = k * 32 + static_cast<std::size_t>(l);
            value[r * 32 + static_cast<std::size_t>(l)] =
                (now.value[at] + iterations * (now.value[at] - before.value[at])) & mask_of(shape.bits[k]);
        }
    }
    for (std::size_t a = 0; a < shape.accesses.size(); ++a) {
        AccessTally& t = (*tallies)[static_cast<std::size_t>(shape.accesses[a])];
        const auto add = [&](std::uint64_t& figure, std::size_t f) {
            figure += iterations / period * (now.tally[a][f] - window_start.first[a][f]);
        };
        add(t.requests, 0), add(t.sectors, 1), add(t.ideal_sectors, 2), add(t.wavefronts, 3),
            add(t.ideal_wavefronts, 4);
    }
    out.extrapolated += iterations / period * (now.instructions - window_start.second);
    ++out.loops_skipped;
}

void WarpEvaluator::State::back_edge(int at, int head, WarpOutcome& out)
{
    if (!budget.skip_loops) return;
    if (track.back_edge != at || track.head != head) {
        track = LoopTrack{};
        track.head = head;
        track.back_edge = at;
        const LoopShape& shape = loop_shape(head, at);
        track.following = shape.skippable;
        if (!track.following) return;
        track.current.assign(static_cast<std::size_t>(at - head + 1), LoopStep{});
        track.previous = track.current;
        track.last = snapshot(shape, out.instructions);
        track.history.emplace_back(track.last.tally, track.last.instructions);
        track.iterations = 1;
        return;
    }
    if (!track.following) return; // a loop that cannot be skipped
    const LoopShape& shape = loop_shape(head, at);
    LoopSnapshot now = snapshot(shape, out.instructions);
    track.history.emplace_back(now.tally, now.instructions);
    if (track.history.size() > 33) track.history.pop_front();
    if (track.iterations >= 2) {
        std::uint64_t skip = 0, period = 1;
        track.alike = iterations_alike(shape, now, skip, period) ? track.alike + 1 : 0;
        // Every iteration of the window repeated the one before it, so later windows repeat it.
        if (skip > 0 && static_cast<std::uint64_t>(track.alike) >= period && track.history.size() > period &&
            now.unpredicted == track.older.unpredicted) {
            skip_ahead(shape, now, skip, period, out);
            now = snapshot(shape, out.instructions);
            track.iterations = 0;
            track.alike = 0;
            track.history.clear();
            track.history.emplace_back(now.tally, now.instructions);
        }
    }
    track.older = std::move(track.last);
    track.last = std::move(now);
    ++track.iterations;
    std::swap(track.previous, track.current);
    std::fill(track.current.begin(), track.current.end(), LoopStep{});
}

WarpOutcome WarpEvaluator::State::run(std::uint64_t budget_left)
{
    WarpOutcome out;
    const int count = static_cast<int>(code.size());
    bool together = true; // every live lane at one instruction (each starts at the first)
    while (live != 0) {
        int at = INT_MAX;
        std::uint32_t active = 0;
        if (together) {
            at = static_cast<int>(pc[std::countr_zero(live)]);
            active = live;
        } else {
            for (std::uint32_t m = live; m != 0; m &= m - 1)
                at = std::min(at, static_cast<int>(pc[std::countr_zero(m)]));
            for (std::uint32_t m = live; m != 0; m &= m - 1)
                if (static_cast<int>(pc[std::countr_zero(m)]) == at) active |= 1u << std::countr_zero(m);
            together = active == live;
        }
        if (at >= count) { // past the last instruction: the lanes end
            live &= ~active;
            continue;
        }
        if (++out.instructions > budget_left) {
            out.followed = false;
            out.reason = fmt::format("the warp ran past the budget of {} instructions (at {})", budget_left, where(at));
            return out;
        }
        const Instruction& in = kernel.instructions[static_cast<std::size_t>(at)];
        const Decoded& d = code[static_cast<std::size_t>(at)];
        std::uint32_t run_lanes = active, undecided = 0;
        int guard_origin = -1;
        if (in.guard >= 0) {
            const Column g = read(register_operand(in.guard), active);
            undecided = active & ~g.known;
            guard_origin = g.origin;
            run_lanes = 0;
            for (std::uint32_t m = active & g.known; m != 0; m &= m - 1) {
                const int l = std::countr_zero(m);
                if ((g.v[l] != 0) != in.guard_negated) run_lanes |= 1u << l;
            }
        }
        for (std::uint32_t m = active; m != 0; m &= m - 1) pc[std::countr_zero(m)] = static_cast<std::uint32_t>(at + 1);
        if (track.following) observe(at, in, d, run_lanes, undecided);
        if ((d.op == Op::bra || d.op == Op::ret) && undecided != 0) {
            out.followed = false;
            out.reason = fmt::format("the branch at {} {}", where(at), because(guard_origin));
            return out;
        }
        switch (d.op) {
        case Op::bra:
            if (in.target < 0) {
                out.followed = false;
                out.reason = fmt::format("{}: an indirect branch", where(at));
                return out;
            }
            for (std::uint32_t m = run_lanes; m != 0; m &= m - 1)
                pc[std::countr_zero(m)] = static_cast<std::uint32_t>(in.target);
            if (run_lanes != 0 && run_lanes != active) together = false; // the lanes part
            // A loop's backward branch, taken by the whole warp together: perhaps the iterations repeat.
            if (in.target <= at && run_lanes == live && active == live) back_edge(at, in.target, out);
            break;
        case Op::ret: live &= ~run_lanes; break;
        case Op::nop: break;
        case Op::call:
            out.followed = false;
            out.reason = fmt::format("{} calls a function, which the model does not follow", where(at));
            return out;
        case Op::access: execute_access(in, d, run_lanes, undecided, guard_origin, at); break;
        case Op::shfl: {
            Column valid;
            const Column r = in.operands.size() >= 4 ? shuffle(in, run_lanes, valid) : Column{};
            if (!in.operands.empty()) write(in.operands[0].reg, r, run_lanes);
            if (!in.operands.empty()) write(in.operands[0].second_reg, valid, run_lanes);
            if (undecided) forget(in, undecided, guard_origin);
            break;
        }
        default: {
            const Column r = compute(in, d, run_lanes, at);
            if (!in.operands.empty() && in.operands[0].kind == OperandKind::reg)
                write(in.operands[0].reg, r, run_lanes);
            else if (run_lanes)
                forget(in, run_lanes, at);
            if (d.op == Op::setp && !in.operands.empty() && in.operands[0].second_reg >= 0) {
                Column inverse = r;
                for (auto& x : inverse.v) x = x == 0;
                write(in.operands[0].second_reg, inverse, run_lanes);
            }
            if (undecided) forget(in, undecided, guard_origin);
            break;
        }
        }
    }
    return out;
}

WarpEvaluator::WarpEvaluator(const PtxModule& module, const PtxKernel& kernel, const LaunchShape& launch,
                             const EvaluationBudget& budget)
    : state_(std::make_unique<State>(module, kernel, launch, budget))
{
    state_->prepare();
}

WarpEvaluator::~WarpEvaluator() = default;

const std::vector<AccessPrediction>& WarpEvaluator::accesses() const
{
    return state_->accesses;
}

const std::string& WarpEvaluator::unsupported() const
{
    return state_->unsupported;
}

WarpOutcome WarpEvaluator::run(const std::array<std::uint32_t, 3>& block, std::uint32_t warp,
                               std::vector<AccessTally>& tallies, std::uint64_t instructions)
{
    State& s = *state_;
    const std::size_t registers = s.kernel.register_names.size();
    s.value.assign(registers * 32, 0);
    s.known.assign(registers, 0);
    s.tag.assign(registers, 0);
    s.origin.assign(registers, -3);
    s.tallies = &tallies;
    s.track = LoopTrack{};
    s.ctaid = block;
    const auto& b = s.launch.block;
    const std::uint64_t threads = std::uint64_t{b[0]} * b[1] * b[2];
    s.live = 0;
    for (std::uint32_t l = 0; l < 32; ++l) {
        const std::uint64_t t = std::uint64_t{warp} * 32 + l;
        s.pc[l] = 0;
        if (t >= threads) continue;
        s.live |= 1u << l;
        s.tid[0][l] = static_cast<std::uint32_t>(t % b[0]);
        s.tid[1][l] = static_cast<std::uint32_t>(t / b[0] % b[1]);
        s.tid[2][l] = static_cast<std::uint32_t>(t / (std::uint64_t{b[0]} * b[1]));
    }
    return s.run(instructions);
}

} // namespace harness::analysis
