// The zklock tool's pure functions: terminal escaping and shortening,
// durations, the words after the lock path, the command a mistyped name
// meant, connect strings, the descriptor ranges CMD must not inherit, the
// status table and what run says of a busy, mismatched or lost lock.
#include "arguments.hpp"
#include "command_line.hpp"
#include "common.hpp"
#include "connect_string.hpp"
#include "descriptors.hpp"
#include "hold_text.hpp"
#include "status_view.hpp"
#include "terminal_text.hpp"

#include <zklock/error.hpp>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <climits>
#include <sstream>

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

TEST(WaitDuration, EveryDigitOfAFractionCounts) {
    // 0.91111111111111111199 h is 3280000.000000000003164 ms: up to the next
    // millisecond, though its first nine digits make 3279999.9996.
    EXPECT_EQ(parse_wait_duration("0.91111111111111111199h").value, milliseconds(3280001));
    EXPECT_EQ(parse_wait_duration("0.9111111111h").value, milliseconds(3280000));
    EXPECT_EQ(parse_wait_duration("0.27777777777777777777777777778h").value, milliseconds(1000001));
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

// Without a "--" the words are the command (run then refuses it: MissingSeparator).
TEST(TrailingWords, ACommandWithoutSeparatorIsTheCommand) {
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

// --- shortened ------------------------------------------------------------------

TEST(Shortened, LeavesWhatFitsAndCutsTheRestWithAnEllipsis) {
    EXPECT_EQ(shortened("/locks/x"), "/locks/x");
    const std::string hostile = "/" + std::string(5000, 'a');
    const auto cut = shortened(hostile);
    EXPECT_EQ(columns(escape_control(cut)), quote_width);
    EXPECT_EQ(cut, "/" + std::string(quote_width - 2, 'a') + "\u2026");
    EXPECT_EQ(shortened("abcdef", 4), "abc\u2026");
    EXPECT_EQ(shortened("abcdef", 4, keep::end), "\u2026def");
    EXPECT_EQ(shortened("abcdef", 6), "abcdef");
}

TEST(Shortened, CountsEscapesAsShownAndNeverSplitsOneOrACharacter) {
    // \x1b takes four columns: with three left it is dropped whole, not cut to "\x1".
    EXPECT_EQ(shortened("ab\x1b" "cdef", 5), "ab\u2026");
    EXPECT_EQ(escape_control(shortened("ab\x1b" "cdef", 7)), "ab\\x1b\u2026");
    // A two-byte character is one column and is kept or dropped whole.
    EXPECT_EQ(shortened("\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9\xc3\xa9\xc3\xa9");
    EXPECT_EQ(shortened("\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 3), "\xc3\xa9\xc3\xa9\u2026");
    EXPECT_EQ(shortened("x\xffyyyyyy", 4), "x\u2026");  // an invalid byte is shown as \xff: four columns
    EXPECT_EQ(shortened("a\\bcdef", 4), "a\\\u2026");  // a backslash is shown as \\: two columns
    EXPECT_EQ(shortened("\xe2\x80\xae" "abc", 6), "\u2026");  // U+202E is shown as \u202e: six columns
    EXPECT_EQ(shortened("\xe2\x80\xae" "abc", 9), "\xe2\x80\xae" "abc");
    EXPECT_EQ(shortened("abc\xe2\x80\xae", 7, keep::end), "\u2026\xe2\x80\xae");
}

TEST(Shortened, FitsEveryWidthAsEscapeControlShowsIt) {
    const std::vector<std::string> samples{"plain text", "tab\there\nand\\more", "\x1b[31mred\x7f", "\xc3\xa9t\xc3\xa9",
                                           "bad \xff\xc3 bytes", "\xe2\x80\xae" "rlo \xc2\x9b" "csi", "\xf0\x9f\x94\x92 lock"};
    for (const auto& text : samples)
        for (const auto kept : {keep::start, keep::end})
            for (std::size_t width = 0; width < 40; ++width) {
                const auto cut = shortened(text, width, kept);
                const auto shown = columns(escape_control(text));
                if (shown <= width) {
                    EXPECT_EQ(cut, text) << width;
                } else {
                    EXPECT_LE(columns(escape_control(cut)), width) << text << " " << width;
                }
                if (shown > width && width > 0) {
                    EXPECT_GT(columns(escape_control(cut)), 0u) << text << " " << width;
                }
            }
}

// --- credentials ------------------------------------------------------------------

TEST(Credentials, SplitsTheAuthFileByBackendAndRefusesWithoutTheSecret) {
    using zklock::auth_entry;
    const auto c = credentials_of({{"digest", "alice:zk-secret"}, {"redis", "default:redis-secret"},
                                   {"mysql", "bob:mysql-secret"}},
                                  "/etc/zklock/auth", {"auth::cdrwa", "world:anyone:r"});
    ASSERT_TRUE(c.value) << c.problem;
    EXPECT_EQ(c.value->zookeeper, (std::vector<auth_entry>{{"digest", "alice:zk-secret"}}));
    EXPECT_EQ(c.value->redis_user, "default");
    EXPECT_EQ(c.value->redis_password, "redis-secret");
    EXPECT_EQ(c.value->mysql_user, "bob");
    EXPECT_EQ(c.value->mysql_password, "mysql-secret");
    ASSERT_TRUE(c.value->acl);
    EXPECT_EQ(c.value->acl->size(), 2u);

    const auto redis = credentials_of({{"redis", "redis-secret"}}, "/etc/zklock/auth", {});
    EXPECT_FALSE(redis.value);
    EXPECT_EQ(redis.problem, "auth file /etc/zklock/auth: a redis line is redis:USER:PASSWORD "
                             "(USER default for a server with requirepass)");
    const auto mysql = credentials_of({{"mysql", "mysql-secret"}}, "/etc/zklock/auth", {});
    EXPECT_FALSE(mysql.value);
    EXPECT_EQ(mysql.problem, "auth file /etc/zklock/auth: a mysql line is mysql:USER:PASSWORD");
    // An ACL that names the creator needs a ZooKeeper identity.
    const auto acl = credentials_of({{"redis", "default:redis-secret"}}, "/etc/zklock/auth", {"auth::cdrwa"});
    EXPECT_FALSE(acl.value);
    EXPECT_EQ(acl.problem.rfind("--acl: ", 0), 0u) << acl.problem;
    EXPECT_EQ(notice_text("a\x1b[2Jb"), "zklock: a\\x1b[2Jb\n");
}

// --- durations ---------------------------------------------------------------------

TEST(DurationRange, RefusesOutsideTheRangeInItsUnits) {
    const duration_range chaos{milliseconds(200), milliseconds(4000)};
    EXPECT_EQ(parse_duration_in("1.5s", chaos).value, milliseconds(1500));
    EXPECT_EQ(parse_duration_in("200", chaos).value, milliseconds(200));
    const auto low = parse_duration_in("50ms", chaos);
    EXPECT_FALSE(low);
    EXPECT_EQ(low.error, "'50ms' is out of range: 200ms to 4s");
    EXPECT_EQ(parse_duration_in("5s", chaos).error, "'5s' is out of range: 200ms to 4s");
    EXPECT_EQ(parse_duration_in("0", {milliseconds(1), max_wait}).error, "'0' must be more than 0");
    EXPECT_NE(parse_duration_in("5x", chaos).error.find("unknown unit"), std::string::npos);
}

TEST(DurationText, WritesTheLargestUnitThatDividesIt) {
    EXPECT_EQ(duration_text(milliseconds(0)), "0");
    EXPECT_EQ(duration_text(milliseconds(500)), "500ms");
    EXPECT_EQ(duration_text(milliseconds(1500)), "1500ms");
    EXPECT_EQ(duration_text(milliseconds(4000)), "4s");
    EXPECT_EQ(duration_text(milliseconds(120000)), "2m");
    EXPECT_EQ(duration_text(milliseconds(3600000)), "1h");
}

// Every duration option is made by add_duration_option: units, a plain number
// as milliseconds, and a short message (not CLI11's range of doubles).
TEST(DurationOption, TakesUnitsAndPlainMillisecondsAndSaysWhatIsWrong) {
    CLI::App app;
    int grace_ms = 5000;
    std::chrono::milliseconds delay{0};
    add_duration_option(app, "--grace", grace_ms, "wait", {milliseconds(0), max_wait});
    add_duration_option(app, "--delay", delay, "wait", {milliseconds(1), milliseconds(60000)});
    app.parse("--delay 1.5s --grace 2s", false);
    EXPECT_EQ(grace_ms, 2000);
    EXPECT_EQ(delay, milliseconds(1500));
    app.parse("--grace 250", false);
    EXPECT_EQ(grace_ms, 250);
    for (const auto& [option, value] : std::vector<std::pair<std::string, std::string>>{
             {"--grace", "5x"}, {"--delay", "2m"}, {"--delay", "0"}}) {
        try {
            app.parse(option + " " + value, false);
            ADD_FAILURE() << option << " " << value << " was taken";
        } catch (const CLI::ValidationError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind(option + ": '" + value + "' ", 0), 0u) << what;
            EXPECT_LT(what.size(), 80u) << what;
        }
    }
    std::ostringstream help;
    help << app.help();
    EXPECT_NE(help.str().find("--grace TIME=5s"), std::string::npos) << help.str();
    EXPECT_NE(help.str().find("TIME is milliseconds, or a number with a unit"), std::string::npos) << help.str();
}

TEST(WaitUnitHint, NotesAPlainNumberAFlockUserWouldReadAsSeconds) {
    EXPECT_EQ(wait_unit_hint("-w", "5"), "-w 5 waits 5 ms; for 5 seconds write -w 5s");
    EXPECT_EQ(wait_unit_hint("-w", "1"), "-w 1 waits 1 ms; for 1 second write -w 1s");
    EXPECT_EQ(wait_unit_hint("-w", "999"), "-w 999 waits 999 ms; for 999 seconds write -w 999s");
    for (const char* quiet : {"0", "1000", "5s", "500ms", "1.5s", "05", ""})
        EXPECT_EQ(wait_unit_hint("-w", quiet), "") << quiet;
}

// Every other duration option: the same rule as -w's, unless N seconds is out of its range.
TEST(DurationUnitHint, NotesAPlainNumberUnderASecondThatSecondsWouldFit) {
    const duration_range any{milliseconds(1), max_wait};
    EXPECT_EQ(duration_unit_hint("--connect-timeout", "5", any),
              "--connect-timeout 5 is 5 ms; for 5 seconds write --connect-timeout 5s");
    EXPECT_EQ(duration_unit_hint("--grace", "1", any), "--grace 1 is 1 ms; for 1 second write --grace 1s");
    for (const char* quiet : {"0", "1000", "5s", "500ms", "1.5s", "05", ""})
        EXPECT_EQ(duration_unit_hint("--grace", quiet, any), "") << quiet;
    const duration_range tick{milliseconds(1), milliseconds(60000)};  // zklock server --tick
    EXPECT_EQ(duration_unit_hint("--tick", "60", tick), "--tick 60 is 60 ms; for 60 seconds write --tick 60s");
    EXPECT_EQ(duration_unit_hint("--tick", "200", tick), "");  // 200 s is no tick: surely ms
}

// The note comes from the option itself, on stderr, whichever command has it.
TEST(DurationOption, APlainNumberUnderASecondGetsANoteOnStderr) {
    CLI::App app;
    std::chrono::milliseconds timeout{0};
    add_connect_timeout_option(app, timeout);
    ::testing::internal::CaptureStderr();
    app.parse("--connect-timeout 5", false);
    const auto noted = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(timeout, milliseconds(5));
    EXPECT_EQ(noted, "zklock: --connect-timeout 5 is 5 ms; for 5 seconds write --connect-timeout 5s\n");
    ::testing::internal::CaptureStderr();
    app.parse("--connect-timeout 5s", false);
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    EXPECT_EQ(timeout, milliseconds(5000));
    std::ostringstream help;
    help << app.help();
    EXPECT_NE(help.str().find("the library's SessionOptions::connect_timeout defaults to 15s"), std::string::npos)
        << help.str();
}

// --- commands ---------------------------------------------------------------------

TEST(ClosestName, SuggestsTheNearestCommandWhenItIsNear) {
    const std::vector<std::string> commands{"run", "lock", "status", "server", "bench", "demo", "elect", "fence",
                                            "chaos", "help"};
    EXPECT_EQ(closest_name("rnu", commands), "run");     // a swap is one edit
    EXPECT_EQ(closest_name("stauts", commands), "status");
    EXPECT_EQ(closest_name("lokc", commands), "lock");
    EXPECT_EQ(closest_name("elcet", commands), "elect");
    EXPECT_EQ(closest_name("statu", commands), "status");
    EXPECT_EQ(closest_name("frobnicate", commands), "");
    EXPECT_EQ(closest_name("x", commands), "");
    EXPECT_EQ(closest_name(std::string(5000, 'r'), commands), "");
    EXPECT_EQ(unknown_command_text("zklock", "rnu", commands),
              "no command 'rnu'; did you mean 'run'? (zklock help lists the commands)");
    EXPECT_EQ(unknown_command_text("zklock", "frobnicate", commands),
              "no command 'frobnicate' (zklock help lists the commands)");
}

TEST(UnknownOption, SuggestsTheNearestLongOptionOfTheCommand) {
    const std::vector<std::string> options{"--help", "-h", "--connect", "-c", "--json", "--watch", "-W"};
    EXPECT_EQ(unknown_option_text("zklock status", "--jsn", options),
              "unknown option '--jsn'; did you mean '--json'? (zklock status --help lists the options)");
    EXPECT_EQ(unknown_option_text("zklock status", "--conect=127.0.0.1:2181", options),
              "unknown option '--conect'; did you mean '--connect'? (zklock status --help lists the options)");
    EXPECT_EQ(unknown_option_text("zklock status", "--frobnicate", options),
              "unknown option '--frobnicate' (zklock status --help lists the options)");
    // One letter is one edit from any other: no guess.
    EXPECT_EQ(unknown_option_text("zklock status", "-j", options),
              "unknown option '-j' (zklock status --help lists the options)");
}

// The names the suggestion is chosen from: what the help lists, no more.
TEST(UnknownOption, OptionNamesAreTheListedOnes) {
    CLI::App app;
    bool json = false, old = false;
    std::string path;
    app.add_flag("-j,--json", json, "JSON");
    app.add_flag("-w", old, "hidden")->group("");
    app.add_option("LOCK_PATH", path, "path");
    EXPECT_EQ(option_names(app), (std::vector<std::string>{"--help", "-h", "--json", "-j"}));
}

TEST(MissingSeparator, ShowsTheCommandLineWithItsSeparator) {
    EXPECT_EQ(missing_separator_hint("zklock run", {"/locks/x"}, {"echo", "hi there"}),
              "CMD goes after --: zklock run /locks/x -- echo 'hi there' (without it, a word after LOCK_PATH could "
              "be CMD or one more lock path)");
}

// --- connect strings ---------------------------------------------------------------

TEST(ConnectString, WellFormedOnesHaveNoProblem) {
    for (const char* ok : {"127.0.0.1:2181", "zk1.example.com:2181,zk2.example.com:2182/app", "h_1:1/a b/c",
                           "::1:2181", "nosuchhost.invalid:2181", "host:2181/"})
        EXPECT_EQ(connect_string_problem(ok), "") << ok;
}

TEST(ConnectString, MalformedOnesSayWhatIsWrong) {
    const auto says = [](const char* connect, const char* why) {
        const auto problem = connect_string_problem(connect);
        EXPECT_NE(problem.find(why), std::string::npos) << connect << ": " << problem;
    };
    says("", "empty");
    says("127.0.0.1", "has no port");
    says("127.0.0.1:abc", "port is a number from 1 to 65535");
    says("127.0.0.1:0", "port is a number");
    says("127.0.0.1:65536", "port is a number");
    says(":2181", "has no host");
    says("a:1,,b:2", "empty server");
    says("[::1]:2181", "without brackets");
    says("a b:2181", "a host is letters");
    says("/app", "no server");
    says("h:1/a//b", "empty segment");
    says("h:1/a/", "ends with '/'");
    says("h:1/a/../b", "'..'");
    EXPECT_LT(connect_string_problem(std::string(5000, 'x')).size(), 2 * quote_width + 40);
}

TEST(ConnectString, AShellCommandIsToldApartFromAConnectString) {
    EXPECT_TRUE(looks_like_a_command("echo hi"));
    EXPECT_TRUE(looks_like_a_command("make>log"));
    EXPECT_TRUE(looks_like_a_command("./job.sh;rm"));
    EXPECT_FALSE(looks_like_a_command("127.0.0.1:2181"));
    EXPECT_FALSE(looks_like_a_command("h:2181/my app"));  // a chroot may hold a blank
    EXPECT_FALSE(looks_like_a_command("make"));           // no port, but nothing says command: left to the connect
    EXPECT_EQ(flock_command_hint("zklock run", "/x", "echo hi"),
              "-c is the ZooKeeper connect string (host:port,...), not a command: for flock's -c 'echo hi' write "
              "zklock run /x -- sh -c 'echo hi'");
    EXPECT_NE(flock_command_hint("zklock run", "", std::string(500, ';')).find("zklock run LOCK_PATH -- sh -c 'CMD'"),
              std::string::npos);
}

// --- what run and elect say ----------------------------------------------------------

namespace {

zklock::contender node(std::size_t position, std::string data, bool shared = false) {
    zklock::contender c;
    c.position = position;
    c.node = "_c_0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0-" + std::string(shared ? "read-" : "lock-") +
             "000000000" + std::to_string(position);
    c.fencing_token = 4294967300 + static_cast<std::int64_t>(position);
    c.owner_session = 0x1000a3b2c0d0005 + static_cast<std::int64_t>(position);
    c.created_ms = 1'700'000'000'000;
    c.data = std::move(data);
    c.shared = shared;
    return c;
}

} // namespace

TEST(BusyText, NamesTheHolderAsStatusShowsTheOwner) {
    zklock::queue_listing listing;
    listing.contenders = {node(0, "billing-7"), node(1, "waiter")};
    EXPECT_EQ(busy_text("lock /x is held by someone else", listing, 1, false),
              "lock /x is held by someone else (holder: billing-7)");
    listing.contenders = {node(0, "a"), node(1, "b"), node(2, "c")};
    EXPECT_EQ(busy_text("all 2 permits of /x are held by others", listing, 2, false),
              "all 2 permits of /x are held by others (holders: a, b)");
    listing.contenders = {node(0, "r1", true), node(1, "w"), node(2, "r2", true)};
    EXPECT_EQ(busy_text("lock /x is held, or waited for, by a writer", listing, 1, true),
              "lock /x is held, or waited for, by a writer (writer: w)");
    listing.contenders = {node(0, "")};
    EXPECT_NE(busy_text("busy", listing, 1, false).find("(holder: node _c_"), std::string::npos);
    EXPECT_EQ(busy_text("busy", zklock::queue_listing{}, 1, false), "busy");
    // Hostile data: cut to a terminal line (notice() escapes it).
    listing.contenders = {node(0, "\x1b[2J" + std::string(5000, 'z'))};
    const auto text = busy_text("busy", listing, 1, false);
    EXPECT_LT(columns(escape_control(text)), 80u) << text;
    EXPECT_NE(text.find("\u2026"), std::string::npos) << text;
}

TEST(PermitsMismatchText, SaysTheStoredNumber) {
    EXPECT_EQ(permits_mismatch_text("/x", 2, 3),
              "/x is a semaphore of 2 permits, not 3 (every participant must give the same --permits)");
    EXPECT_EQ(permits_mismatch_text("/x", 1, 3).find("/x is a semaphore of 1 permit, not 3"), 0u);
    EXPECT_EQ(permits_mismatch_text("/x", std::nullopt, 3).find("/x is a semaphore with another number of permits "
                                                                "than 3"),
              0u);
}

TEST(LossReason, SpeaksOfZooKeeperAloneWithoutParentheses) {
    using zklock::errc;
    for (const auto e : {errc::session_expired, errc::node_deleted, errc::connection_suspended}) {
        const auto why = loss_reason(make_error_code(e));
        EXPECT_EQ(why.find('('), std::string::npos) << why;
        EXPECT_EQ(why.find("Redis"), std::string::npos) << why;
        EXPECT_EQ(why.find("PostgreSQL"), std::string::npos) << why;
    }
    EXPECT_EQ(loss_reason(make_error_code(errc::session_expired)), "the ZooKeeper session expired");
    EXPECT_EQ(loss_reason(make_error_code(errc::node_deleted)), "another client deleted the lock node");
    EXPECT_EQ(loss_reason(make_error_code(errc::node_deleted), "election node"),
              "another client deleted the election node");
    EXPECT_NE(loss_reason(make_error_code(errc::revoked)).find("revocation request"), std::string::npos);
}

// --- the status table -------------------------------------------------------------

TEST(StatusTable, FitsAHundredColumnsUnlessWide) {
    zklock::queue_listing listing;
    listing.contenders = {node(0, "nightly report on host-7.example.com, started by the cron job of the billing team"),
                          node(1, std::string(300, 'o')), node(2, "\x1b[2J")};
    const auto now = 1'700'000'004'000;
    const auto text = status_text("/locks/nightly", listing, 1, "127.0.0.1:2181", now);
    std::istringstream lines(text);
    std::size_t n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
        EXPECT_LE(columns(line), table_width) << line;
        EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    }
    EXPECT_EQ(n, 5u) << text;
    // A node name keeps its end, where the sequence number is.
    EXPECT_NE(text.find("\u2026" + listing.contenders[0].node.substr(listing.contenders[0].node.size() - 23) + " "),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("\\x1b[2J"), std::string::npos) << text;
    EXPECT_EQ(text.find("DIALECT"), std::string::npos) << text;  // one dialect, no reader: not shown
    EXPECT_EQ(text.find("KIND"), std::string::npos) << text;

    const auto wide = status_text("/locks/nightly", listing, 1, "127.0.0.1:2181", now, true);
    EXPECT_NE(wide.find("DIALECT"), std::string::npos) << wide;
    EXPECT_NE(wide.find("KIND"), std::string::npos) << wide;
    EXPECT_NE(wide.find(listing.contenders[0].node), std::string::npos) << wide;
    EXPECT_NE(wide.find(listing.contenders[0].data), std::string::npos) << wide;
    EXPECT_NE(wide.find(std::string(300, 'o')), std::string::npos) << wide;

    // A reader in the queue brings KIND back, narrow or not.
    listing.contenders.push_back(node(3, "reader", true));
    EXPECT_NE(status_text("/locks/nightly", listing, 1, "127.0.0.1:2181", now).find("KIND"), std::string::npos);
}

// A path that does not exist is not an idle lock: said in the text and in the JSON.
TEST(StatusTable, AMissingPathSaysSoAndAnIdleOneHasNoContenders) {
    zklock::queue_listing idle;
    const auto now = 1'700'000'004'000;
    EXPECT_EQ(status_text("/locks/x", idle, 1, "127.0.0.1:2181", now), "/locks/x: no contenders\n");
    EXPECT_EQ(status_json("/locks/x", idle, 1, now)["exists"], true);
    zklock::queue_listing missing;
    missing.path_exists = false;
    EXPECT_EQ(status_text("/locks/x", missing, 1, "127.0.0.1:2181", now),
              "/locks/x: " + std::string(missing_path_text) + "\n");
    EXPECT_NE(std::string(missing_path_text).find("does not exist"), std::string::npos);
    EXPECT_EQ(status_json("/locks/x", missing, 1, now)["exists"], false);
    EXPECT_TRUE(same_queue(idle, missing));  // a lock's node made, nobody in its queue yet: --watch waits on
}

TEST(StatusTable, APendingRevocationRequestShowsInPlaceOfTheOwnerWithANote) {
    zklock::queue_listing listing;
    listing.contenders = {node(0, "__REVOKE__"), node(1, "host-7:42"), node(2, "__REVOKE__")};
    const auto now = 1'700'000'004'000;
    const auto text = status_text("/locks/nightly", listing, 1, "127.0.0.1:2181", now);
    EXPECT_NE(text.find("[revocation requested]"), std::string::npos) << text;
    EXPECT_EQ(text.find("__REVOKE__"), std::string::npos) << text;
    EXPECT_NE(text.find("note: revocation requested of position 0 (/locks/nightly/" + listing.contenders[0].node +
                        "): a revocable holder lets go; one that is not keeps the lock\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("note: revocation requested of position 2 (/locks/nightly/" + listing.contenders[2].node +
                        "): it waits; a revocable zklock lock lets go once granted\n"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("position 1 ("), std::string::npos) << text;
    const auto json = status_json("/locks/nightly", listing, 1, now);
    EXPECT_EQ(json["contenders"][0]["revocation_requested"], true);
    EXPECT_EQ(json["contenders"][1]["revocation_requested"], false);
    EXPECT_EQ(json["contenders"][0]["owner"], "__REVOKE__");  // the data, as it is
    listing.contenders[0].data = "__REVOKE__ ";  // not exactly the request: an owner's name like any other
    EXPECT_EQ(revocation_notes("/locks/nightly", listing, 1).size(), 1u);
}
