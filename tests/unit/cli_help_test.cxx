#include "harness/cli/commands.hxx"
#include "harness/cli/exit_codes.hxx"

#include <gtest/gtest.h>

namespace cli_help_test {

using namespace harness;

namespace {

struct Outcome {
    int code = -1;
    std::string out, err;
};

Outcome tool(const std::vector<std::string>& args)
{
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    Outcome o;
    o.code = cli::dispatch(args);
    o.out = testing::internal::GetCapturedStdout();
    o.err = testing::internal::GetCapturedStderr();
    return o;
}

} // namespace

// Every command's help comes from the same parser: its description, "Usage: harness <name>", its
// options, exit 0.
TEST(CliHelp, EveryCommandHasTheSameKindOfHelp)
{
    for (const auto& c : cli::command_table()) {
        if (std::string(c.name) == "help") continue;
        const Outcome o = tool({c.name, "--help"});
        EXPECT_EQ(o.code, cli::exit_pass) << c.name << o.err;
        EXPECT_NE(o.out.find("Usage: harness " + std::string(c.name)), std::string::npos) << o.out;
        EXPECT_NE(o.out.find("-h,--help"), std::string::npos) << c.name;
        EXPECT_EQ(o.out.find("{false}"), std::string::npos) << c.name << ": a flag shows its default";
        // `harness help NAME` is `harness NAME --help`.
        EXPECT_EQ(tool({"help", c.name}).out, o.out) << c.name;
    }
    const Outcome top = tool({});
    EXPECT_EQ(top.code, cli::exit_pass);
    for (const auto& c : cli::command_table()) EXPECT_NE(top.out.find(c.description), std::string::npos) << c.name;
    EXPECT_NE(top.out.find("exit codes:"), std::string::npos);
    EXPECT_EQ(tool({"--help"}).out, top.out);
}

TEST(CliHelp, AGroupWithoutAnActionShowsItsHelp)
{
    const Outcome o = tool({"baseline"});
    EXPECT_EQ(o.code, cli::exit_pass) << o.err;
    EXPECT_NE(o.out.find("Usage: harness baseline"), std::string::npos) << o.out;
    EXPECT_NE(o.out.find("update"), std::string::npos);
    EXPECT_EQ(tool({"baseline", "update", "--help"}).code, cli::exit_pass);
}

TEST(CliHelp, UnknownCommandsAndOptionsAreBadInputWithASuggestion)
{
    Outcome o = tool({"runn"});
    EXPECT_EQ(o.code, cli::exit_bad_input);
    EXPECT_NE(o.err.find("did you mean 'run'?"), std::string::npos) << o.err;
    o = tool({"baseline", "updat"});
    EXPECT_EQ(o.code, cli::exit_bad_input);
    EXPECT_NE(o.err.find("did you mean 'update'?"), std::string::npos) << o.err;
    o = tool({"metrics", "--bogus"});
    EXPECT_EQ(o.code, cli::exit_bad_input);
    EXPECT_NE(o.err.find("harness metrics: "), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("--bogus"), std::string::npos) << o.err;
}

// Options a command would ignore are not offered: `list` compiles nothing, so it has no cache options.
TEST(CliHelp, CommandsOfferOnlyOptionsTheyUse)
{
    const Outcome list = tool({"list", "--help"});
    EXPECT_EQ(list.out.find("--cache-dir"), std::string::npos);
    EXPECT_NE(tool({"check", "--help"}).out.find("--cache-dir"), std::string::npos);
    EXPECT_EQ(tool({"--version"}).out, std::string("harness ") + HARNESS_VERSION + "\n");
}

} // namespace cli_help_test
