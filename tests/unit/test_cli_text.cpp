// The zklock tool's pure functions: terminal escaping, wait durations, the
// words after the lock path, and the descriptor ranges CMD must not inherit.
#include "arguments.hpp"
#include "descriptors.hpp"
#include "terminal_text.hpp"

#include <gtest/gtest.h>

#include <climits>

using namespace zklock::cli;
using std::chrono::milliseconds;

// --- escape_control ---------------------------------------------------------------

TEST(EscapeControl, LeavesPrintableTextAndUtf8Alone) {
    EXPECT_EQ(escape_control("host-7:1234"), "host-7:1234");
    EXPECT_EQ(escape_control("ünïcode 🔒 日本"), "ünïcode 🔒 日本");
    EXPECT_EQ(escape_control(""), "");
}

TEST(EscapeControl, ShowsControlCharactersAsEscapes) {
    EXPECT_EQ(escape_control("\x1b[31mred"), "\\x1b[31mred");
    EXPECT_EQ(escape_control("a\nb\rc\td"), "a\\nb\\rc\\td");
    EXPECT_EQ(escape_control(std::string("nul\0x", 5)), "nul\\x00x");
    EXPECT_EQ(escape_control("\x07\x7f"), "\\x07\\x7f");
    EXPECT_EQ(escape_control("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
}

TEST(EscapeControl, EscapesTheBackslashSoTheOutputReadsBackUnambiguously) {
    EXPECT_EQ(escape_control("\\x1b"), "\\\\x1b");
    EXPECT_NE(escape_control("\\x1b"), escape_control("\x1b"));
}

TEST(EscapeControl, ShowsInvalidUtf8BytesAsEscapes) {
    EXPECT_EQ(escape_control("\xff\xfe"), "\\xff\\xfe");
    EXPECT_EQ(escape_control("a\xc3"), "a\\xc3");              // truncated
    EXPECT_EQ(escape_control("\xc0\xaf"), "\\xc0\\xaf");       // overlong '/'
    EXPECT_EQ(escape_control("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
    EXPECT_EQ(escape_control("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // beyond U+10FFFF
    EXPECT_EQ(escape_control("\x9b" "31m"), "\\x9b31m");  // a raw C1 CSI byte
}

TEST(EscapeControl, ShowsC1AndBidirectionalControlsAsCodePoints) {
    EXPECT_EQ(escape_control("\xc2\x9b" "31m"), "\\u009b31m");  // U+009B CSI
    EXPECT_EQ(escape_control("abc\xe2\x80\xae" "def"), "abc\\u202edef");  // RIGHT-TO-LEFT OVERRIDE
    EXPECT_EQ(escape_control("\xe2\x81\xa6x\xe2\x81\xa9"), "\\u2066x\\u2069");
    EXPECT_EQ(escape_control("a\xe2\x80\xa8" "b"), "a\\u2028b");  // LINE SEPARATOR
}

TEST(ShellWord, QuotesOnlyWhatTheShellWouldRead) {
    EXPECT_EQ(shell_word("-n"), "-n");
    EXPECT_EQ(shell_word("/locks/x"), "/locks/x");
    EXPECT_EQ(shell_word("a b"), "'a b'");
    EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
    EXPECT_EQ(shell_word(""), "''");
    EXPECT_EQ(shell_word("$HOME"), "'$HOME'");
    EXPECT_EQ(shell_word("\x1b[2J"), "'\\x1b[2J'");
}

// --- parse_wait_duration ----------------------------------------------------------

TEST(WaitDuration, PlainIntegersStayMilliseconds) {
    EXPECT_EQ(parse_wait_duration("300").value, milliseconds(300));
    EXPECT_EQ(parse_wait_duration("0").value, milliseconds(0));
    EXPECT_TRUE(parse_wait_duration("0"));
    EXPECT_EQ(parse_wait_duration("2147483647").value, max_wait);
}

TEST(WaitDuration, UnitsWithFractions) {
    EXPECT_EQ(parse_wait_duration("1.5s").value, milliseconds(1500));
    EXPECT_EQ(parse_wait_duration("500ms").value, milliseconds(500));
    EXPECT_EQ(parse_wait_duration("2m").value, milliseconds(120000));
    EXPECT_EQ(parse_wait_duration("0.5h").value, milliseconds(1800000));
    EXPECT_EQ(parse_wait_duration("0s").value, milliseconds(0));
    EXPECT_EQ(parse_wait_duration("0.25s").value, milliseconds(250));
    EXPECT_EQ(parse_wait_duration("1.000s").value, milliseconds(1000));
}

TEST(WaitDuration, AFractionOfAMillisecondRoundsUpSoOnlyZeroMeansDoNotWait) {
    EXPECT_EQ(parse_wait_duration("0.0001s").value, milliseconds(1));
    EXPECT_EQ(parse_wait_duration("0.5ms").value, milliseconds(1));
    EXPECT_EQ(parse_wait_duration("1.0005s").value, milliseconds(1001));
    EXPECT_EQ(parse_wait_duration("0.0000000001s").value, milliseconds(1));  // past nine digits
    EXPECT_EQ(parse_wait_duration("0.000s").value, milliseconds(0));
}

TEST(WaitDuration, RefusesWhatIsNotADurationSayingWhy) {
    const auto refused = [](const char* text, const char* why) {
        const auto r = parse_wait_duration(text);
        EXPECT_FALSE(r) << text;
        EXPECT_NE(r.error.find(why), std::string::npos) << text << ": " << r.error;
    };
    refused("", "not a duration");
    refused("-5", "not a duration");
    refused("+5", "not a duration");
    refused("s", "not a duration");
    refused(".5s", "not a duration");
    refused("1.s", "digit must follow");
    refused("1.5", "no unit");
    refused("5x", "unknown unit");
    refused("5 s", "unknown unit");
    refused("5sec", "unknown unit");
    refused("2147483648", "too long");
    refused("99999999999999999999999", "too long");
    refused("597h", "too long");
    refused("2147483.648s", "too long");
}

TEST(WaitDuration, EscapesTheTextItQuotes) {
    const auto r = parse_wait_duration("5\x1b[2J");
    EXPECT_FALSE(r);
    EXPECT_EQ(r.error.find('\x1b'), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("\\x1b"), std::string::npos) << r.error;
}

// --- split_trailing / misplaced_option_hint ---------------------------------------

TEST(LockPathWords, PathsBeforeTheSeparatorAreMoreLockPaths) {
    auto w = split_lock_paths({"/b", "/c", "--", "true", "/x"});
    EXPECT_EQ(w.more_paths, (std::vector<std::string>{"/b", "/c"}));
    EXPECT_EQ(w.rest, (std::vector<std::string>{"--", "true", "/x"}));
    // One path: the separator stays optional, and a command is never a path.
    w = split_lock_paths({"/bin/echo", "hi"});
    EXPECT_TRUE(w.more_paths.empty());
    EXPECT_EQ(w.rest, (std::vector<std::string>{"/bin/echo", "hi"}));
    w = split_lock_paths({"--", "true"});
    EXPECT_TRUE(w.more_paths.empty());
    // Misplaced options before the separator are not paths (split_trailing says so).
    w = split_lock_paths({"/b", "-n", "--", "true"});
    EXPECT_TRUE(w.more_paths.empty());
    EXPECT_EQ(w.rest.size(), 4u);
}

TEST(TrailingWords, EverythingAfterTheSeparatorIsTheCommand) {
    auto t = split_trailing({"--", "true"});
    EXPECT_EQ(t.command, (std::vector<std::string>{"true"}));
    EXPECT_TRUE(t.misplaced.empty());
    t = split_trailing({"--", "-weird", "--x"});
    EXPECT_EQ(t.command, (std::vector<std::string>{"-weird", "--x"}));
    EXPECT_TRUE(t.misplaced.empty());
    t = split_trailing({"--", "--", "true"});
    EXPECT_EQ(t.command, (std::vector<std::string>{"--", "true"}));
}

TEST(TrailingWords, ACommandWithoutSeparatorStillRuns) {
    auto t = split_trailing({"true", "-n"});
    EXPECT_EQ(t.command, (std::vector<std::string>{"true", "-n"}));
    EXPECT_TRUE(t.misplaced.empty());
    t = split_trailing({"-"});  // "-" alone is not an option
    EXPECT_EQ(t.command, (std::vector<std::string>{"-"}));
    EXPECT_TRUE(split_trailing({}).command.empty());
}

TEST(TrailingWords, AnOptionAfterThePathIsMisplaced) {
    auto t = split_trailing({"-n", "--", "true"});
    EXPECT_EQ(t.misplaced, (std::vector<std::string>{"-n"}));
    EXPECT_TRUE(t.separated);
    EXPECT_EQ(t.command, (std::vector<std::string>{"true"}));
    t = split_trailing({"-w", "5", "-v", "--", "echo", "hi"});
    EXPECT_EQ(t.misplaced, (std::vector<std::string>{"-w", "5", "-v"}));
    EXPECT_EQ(t.command, (std::vector<std::string>{"echo", "hi"}));
    t = split_trailing({"-n", "true"});
    EXPECT_EQ(t.misplaced, (std::vector<std::string>{"-n", "true"}));
    EXPECT_FALSE(t.separated);
}

TEST(TrailingWords, TheHintRewritesTheCommandLine) {
    EXPECT_EQ(misplaced_option_hint("zklock run", "LOCK_PATH", {"/x"}, split_trailing({"-n", "--", "true"})),
              "options go before LOCK_PATH: zklock run -n /x -- true");
    EXPECT_EQ(misplaced_option_hint("zklock elect", "ELECTION_PATH", {"/e", "id"},
                                    split_trailing({"--once", "--", "sh", "-c", "echo $X"})),
              "options go before ELECTION_PATH: zklock elect --once /e id -- sh -c 'echo $X'");
    const auto unseparated = misplaced_option_hint("zklock run", "LOCK_PATH", {"/x"}, split_trailing({"-n", "true"}));
    EXPECT_NE(unseparated.find("zklock run [OPTIONS] /x -- CMD"), std::string::npos) << unseparated;
    EXPECT_NE(unseparated.find("-n came after LOCK_PATH"), std::string::npos) << unseparated;
    // Nothing misplaced (no caller asks, but nothing breaks either).
    EXPECT_EQ(misplaced_option_hint("zklock run", "LOCK_PATH", {"/x"}, trailing_words{}),
              "options go before LOCK_PATH: zklock run /x --");
}

// --- descriptor_gaps --------------------------------------------------------------

TEST(DescriptorGaps, NothingKeptClosesEverythingAboveStderr) {
    EXPECT_EQ(descriptor_gaps({}), (std::vector<descriptor_range>{{3u, UINT_MAX}}));
    EXPECT_EQ(descriptor_gaps({0, 1, 2}), (std::vector<descriptor_range>{{3u, UINT_MAX}}));
}

TEST(DescriptorGaps, KeptDescriptorsSplitTheRanges) {
    EXPECT_EQ(descriptor_gaps({7}), (std::vector<descriptor_range>{{3u, 6u}, {8u, UINT_MAX}}));
    EXPECT_EQ(descriptor_gaps({3}), (std::vector<descriptor_range>{{4u, UINT_MAX}}));
    EXPECT_EQ(descriptor_gaps({9, 3, 4, 7, 9}),
              (std::vector<descriptor_range>{{5u, 6u}, {8u, 8u}, {10u, UINT_MAX}}));
    EXPECT_EQ(descriptor_gaps({INT_MAX}),
              (std::vector<descriptor_range>{{3u, static_cast<unsigned>(INT_MAX) - 1}, {static_cast<unsigned>(INT_MAX) + 1, UINT_MAX}}));
}

TEST(Counted, SaysOneThingInTheSingular) {
    EXPECT_EQ(counted(1, "permit"), "1 permit");
    EXPECT_EQ(counted(0, "permit"), "0 permits");
    EXPECT_EQ(counted(3, "client"), "3 clients");
    EXPECT_EQ(counted(2, "process", "processes"), "2 processes");
    EXPECT_EQ(counted(1, "process", "processes"), "1 process");
}
