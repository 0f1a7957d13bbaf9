// The `harness` command line tool.

#include "harness/cli/commands.hxx"

int main(int argc, char** argv)
{
    return harness::cli::run_tool({argv + 1, argv + argc});
}
