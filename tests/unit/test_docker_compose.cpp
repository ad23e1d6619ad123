// docker/ against the README: no Docker engine runs on our machines or in CI,
// so this test parses docker/docker-compose.yml, docker/Dockerfile and the
// README's "Running against Docker services" section and checks that they say
// the same thing (services, images, host ports, the ZooKeeper ensemble, the
// Redlock servers, the bench command). It starts nothing.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#ifndef ZKLOCK_SOURCE_DIR
#error "ZKLOCK_SOURCE_DIR must name the source tree (set in tests/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;

const fs::path source_dir{ZKLOCK_SOURCE_DIR};
const fs::path compose_path = source_dir / "docker" / "docker-compose.yml";
const fs::path dockerfile_path = source_dir / "docker" / "Dockerfile";
const fs::path readme_path = source_dir / "README.md";
const fs::path setup_path = source_dir / "scripts" / "setup";
const fs::path dockerignore_path = source_dir / ".dockerignore";

constexpr std::string_view readme_section = "## Running against Docker services";
constexpr std::string_view table_begin = "<!-- docker-services:begin -->";
constexpr std::string_view table_end = "<!-- docker-services:end -->";
constexpr std::string_view built_from = "built from ";
constexpr std::string_view no_port = "-";
constexpr std::string_view loopback = "127.0.0.1";

std::string read_text(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t\r\n");
    return std::string(s.substr(first, last - first + 1));
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
        const auto at = s.find(sep, start);
        parts.emplace_back(s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
        if (at == std::string_view::npos) return parts;
        start = at + 1;
    }
}

std::vector<std::string> lines_of(std::string_view text) {
    auto lines = split(text, '\n');
    for (auto& line : lines)
        if (!line.empty() && line.back() == '\r') line.pop_back();
    return lines;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

template <class Set> std::string join(const Set& items, std::string_view sep = ", ") {
    std::string out;
    for (const auto& item : items) {
        if (!out.empty()) out += sep;
        out += item;
    }
    return out.empty() ? "(none)" : out;
}

// --- the README --------------------------------------------------------------

// The README from "## Running against Docker services" to the next "## ".
std::string docker_section(const std::string& readme) {
    const auto begin = readme.find(std::string(readme_section) + "\n");
    if (begin == std::string::npos) throw std::runtime_error("README.md has no '" + std::string(readme_section) + "' section");
    const auto end = readme.find("\n## ", begin + readme_section.size());
    return readme.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

struct TableRow {
    std::string image;      // or "built from docker/Dockerfile"
    std::string host_port;  // or "-"
};

// The Markdown table between the docker-services markers: service -> row.
std::map<std::string, TableRow> parse_table(const std::string& section) {
    const auto begin = section.find(table_begin);
    const auto end = section.find(table_end);
    if (begin == std::string::npos || end == std::string::npos || end < begin)
        throw std::runtime_error("the README section has no table between " + std::string(table_begin) + " and " +
                                 std::string(table_end));
    std::map<std::string, TableRow> rows;
    bool header_seen = false;
    for (const auto& raw : lines_of(section.substr(begin + table_begin.size(), end - begin - table_begin.size()))) {
        const auto line = trim(raw);
        if (line.empty()) continue;
        if (line.front() != '|' || line.back() != '|') throw std::runtime_error("not a table row: " + line);
        std::vector<std::string> cells;
        for (const auto& cell : split(std::string_view(line).substr(1, line.size() - 2), '|')) {
            auto text = trim(cell);
            std::erase(text, '`');
            cells.push_back(text);
        }
        if (cells.size() != 3) throw std::runtime_error("table row without 3 cells: " + line);
        if (!header_seen) {
            if (cells != std::vector<std::string>{"Service", "Image", "Host port"})
                throw std::runtime_error("table header must be 'Service | Image | Host port', is: " + line);
            header_seen = true;
            continue;
        }
        if (std::all_of(line.begin(), line.end(), [](char c) { return c == '|' || c == '-' || c == ':' || c == ' '; }))
            continue;  // the |---|---| separator
        if (!rows.emplace(cells[0], TableRow{cells[1], cells[2]}).second)
            throw std::runtime_error("service listed twice in the table: " + cells[0]);
    }
    if (!header_seen) throw std::runtime_error("the docker-services table is empty");
    return rows;
}

// Shell-like words of one command line: quotes group, backslash-newline joins.
std::vector<std::string> shell_words(std::string_view line) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
            else word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\n') {
            ++i;
        } else if (std::isspace(static_cast<unsigned char>(c))) {
            if (in_word) words.push_back(std::exchange(word, {}));
            in_word = false;
        } else if (c == '#' && !in_word) {
            break;  // a comment
        } else {
            word += c;
            in_word = true;
        }
    }
    if (quote) throw std::runtime_error("unterminated quote in: " + std::string(line));
    if (in_word) words.push_back(word);
    return words;
}

// The `zklock bench --backend all ...` command of the section (continuation lines joined).
std::vector<std::string> bench_command(const std::string& section) {
    const auto at = section.find("zklock bench --backend all");
    if (at == std::string::npos) throw std::runtime_error("the README section has no 'zklock bench --backend all' command");
    auto end = at;
    while ((end = section.find('\n', end)) != std::string::npos && end > 0 && section[end - 1] == '\\') ++end;
    return shell_words(std::string_view(section).substr(at, end == std::string::npos ? std::string::npos : end - at));
}

std::optional<std::string> option_value(const std::vector<std::string>& words, std::string_view name) {
    for (std::size_t i = 0; i + 1 < words.size(); ++i)
        if (words[i] == name) return words[i + 1];
    return std::nullopt;
}

// --- the compose file --------------------------------------------------------

struct Published {
    std::string host_ip;  // empty: every interface
    std::string host_port;
    std::string container_port;
};

// One `ports:` entry, short ("[IP:]HOST:CONTAINER[/proto]", "CONTAINER") or long syntax.
Published parse_port(const YAML::Node& entry) {
    if (entry.IsMap()) {
        return {entry["host_ip"] ? entry["host_ip"].as<std::string>() : "",
                entry["published"] ? entry["published"].as<std::string>() : "", entry["target"].as<std::string>()};
    }
    auto spec = entry.as<std::string>();
    spec = spec.substr(0, spec.find('/'));
    const auto parts = split(spec, ':');
    if (parts.size() == 3) return {parts[0], parts[1], parts[2]};
    if (parts.size() == 2) return {"", parts[0], parts[1]};
    return {"", "", parts[0]};
}

std::vector<Published> ports_of(const YAML::Node& service) {
    std::vector<Published> ports;
    if (const auto list = service["ports"])
        for (const auto& entry : list) ports.push_back(parse_port(entry));
    return ports;
}

// `environment:` as a map or as a list of KEY=VALUE.
std::map<std::string, std::string> environment_of(const YAML::Node& service) {
    std::map<std::string, std::string> env;
    const auto node = service["environment"];
    if (!node) return env;
    if (node.IsMap()) {
        for (const auto& kv : node) env[kv.first.as<std::string>()] = kv.second.IsNull() ? "" : kv.second.as<std::string>();
    } else {
        for (const auto& item : node) {
            const auto text = item.as<std::string>();
            const auto eq = text.find('=');
            env[text.substr(0, eq)] = eq == std::string::npos ? "" : text.substr(eq + 1);
        }
    }
    return env;
}

// `depends_on:` as a list or as a map of conditions.
std::set<std::string> dependencies_of(const YAML::Node& service) {
    std::set<std::string> deps;
    const auto node = service["depends_on"];
    if (!node) return deps;
    for (const auto& item : node) deps.insert(node.IsMap() ? item.first.as<std::string>() : item.as<std::string>());
    return deps;
}

std::vector<std::string> command_of(const YAML::Node& service) {
    const auto node = service["command"];
    if (!node) return {};
    if (node.IsSequence()) return node.as<std::vector<std::string>>();
    return shell_words(node.as<std::string>());
}

std::string image_of(const YAML::Node& service) { return service["image"] ? service["image"].as<std::string>() : ""; }

// --- the Dockerfile and scripts/setup -----------------------------------------

// Dockerfile instructions with continuation lines joined and comments dropped.
std::vector<std::string> dockerfile_instructions(const std::string& text) {
    std::vector<std::string> instructions;
    std::string current;
    for (const auto& raw : lines_of(text)) {
        const auto line = trim(raw);
        if (line.empty() || line.front() == '#') continue;
        if (line.back() == '\\') {
            current += line.substr(0, line.size() - 1) + " ";
            continue;
        }
        instructions.push_back(current + line);
        current.clear();
    }
    if (!current.empty()) instructions.push_back(current);
    return instructions;
}

// Packages named after `apt-get install` (up to the next && or ;).
std::set<std::string> apt_installed(const std::vector<std::string>& instructions) {
    std::set<std::string> packages;
    for (const auto& instruction : instructions) {
        if (!starts_with(instruction, "RUN ")) continue;
        const auto words = shell_words(instruction.substr(4));
        for (std::size_t i = 0; i + 1 < words.size(); ++i) {
            if (words[i] != "apt-get" || words[i + 1] != "install") continue;
            for (std::size_t j = i + 2; j < words.size() && words[j] != "&&" && words[j] != ";"; ++j)
                if (words[j].front() != '-') packages.insert(words[j]);
        }
    }
    return packages;
}

// The `packages=( ... )` list of scripts/setup.
std::set<std::string> setup_packages(const std::string& script) {
    std::set<std::string> packages;
    bool inside = false;
    for (const auto& raw : lines_of(script)) {
        auto line = trim(raw.substr(0, raw.find('#')));
        if (!inside) {
            inside = line == "packages=(";
            continue;
        }
        if (line == ")") return packages;
        if (!line.empty()) packages.insert(line);
    }
    throw std::runtime_error("scripts/setup has no 'packages=(' ... ')' list");
}

// --- the fixture ---------------------------------------------------------------

class DockerCompose : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(compose_path)) << compose_path << " is missing";
        try {
            compose_ = YAML::LoadFile(compose_path.string());
        } catch (const YAML::Exception& e) {
            FAIL() << compose_path << " is not valid YAML: " << e.what();
        }
        ASSERT_TRUE(compose_["services"] && compose_["services"].IsMap()) << compose_path << " has no 'services:' map";
        for (const auto& kv : compose_["services"]) services_[kv.first.as<std::string>()] = kv.second;
        try {
            section_ = docker_section(read_text(readme_path));
            table_ = parse_table(section_);
        } catch (const std::exception& e) {
            FAIL() << "README.md: " << e.what();
        }
    }

    // Compose services whose image is IMAGE_PREFIX*, e.g. "zookeeper:".
    std::vector<std::string> services_with_image(std::string_view image_prefix) const {
        std::vector<std::string> names;
        for (const auto& [name, service] : services_)
            if (starts_with(image_of(service), image_prefix)) names.push_back(name);
        return names;
    }

    std::string host_port(const std::string& name) const {
        const auto ports = ports_of(services_.at(name));
        return ports.size() == 1 ? ports[0].host_port : "";
    }

    YAML::Node compose_;
    std::map<std::string, YAML::Node> services_;
    std::string section_;
    std::map<std::string, TableRow> table_;
};

TEST_F(DockerCompose, ServicesAreThoseOfTheReadmeTable) {
    std::set<std::string> in_compose, in_table, only_compose, only_table;
    for (const auto& [name, service] : services_) in_compose.insert(name);
    for (const auto& [name, row] : table_) in_table.insert(name);
    std::ranges::set_difference(in_compose, in_table, std::inserter(only_compose, only_compose.end()));
    std::ranges::set_difference(in_table, in_compose, std::inserter(only_table, only_table.end()));
    EXPECT_TRUE(only_compose.empty()) << "services in docker/docker-compose.yml but not in the README table: "
                                      << join(only_compose);
    EXPECT_TRUE(only_table.empty()) << "services in the README table but not in docker/docker-compose.yml: "
                                    << join(only_table);
}

TEST_F(DockerCompose, ImagesMatchTheReadmeTable) {
    for (const auto& [name, row] : table_) {
        if (!services_.contains(name)) continue;  // reported by ServicesAreThoseOfTheReadmeTable
        const auto& service = services_.at(name);
        if (!starts_with(row.image, built_from)) {
            EXPECT_EQ(image_of(service), row.image)
                << "service " << name << ": the README table says image '" << row.image
                << "', docker/docker-compose.yml says '" << image_of(service) << "'";
            EXPECT_FALSE(service["build"]) << "service " << name << " has a build: the README table should say '"
                                           << built_from << "<Dockerfile>'";
            continue;
        }
        // "built from docker/Dockerfile": a build whose context + dockerfile is that file.
        const auto named = row.image.substr(built_from.size());
        const auto build = service["build"];
        ASSERT_TRUE(build && build.IsMap() && build["context"])
            << "service " << name << ": the README table says '" << row.image
            << "', but docker/docker-compose.yml gives it no build: {context: ...}";
        EXPECT_FALSE(service["image"]) << "service " << name << " is built: an image: name would be pulled by `docker compose pull`";
        const auto context = fs::weakly_canonical(compose_path.parent_path() / build["context"].as<std::string>());
        EXPECT_EQ(context, fs::weakly_canonical(source_dir))
            << "service " << name << ": the build context must be the repository root (the Dockerfile copies it)";
        const auto dockerfile = context / (build["dockerfile"] ? build["dockerfile"].as<std::string>() : "Dockerfile");
        EXPECT_EQ(fs::weakly_canonical(dockerfile), fs::weakly_canonical(source_dir / named))
            << "service " << name << ": the README table says '" << row.image << "', docker/docker-compose.yml builds "
            << dockerfile;
        EXPECT_TRUE(fs::exists(source_dir / named)) << named << " (named in the README table) does not exist";
    }
}

TEST_F(DockerCompose, HostPortsMatchTheReadmeTableOnLoopbackOnly) {
    for (const auto& [name, row] : table_) {
        if (!services_.contains(name)) continue;
        const auto ports = ports_of(services_.at(name));
        if (row.host_port == no_port) {
            EXPECT_TRUE(ports.empty()) << "service " << name << ": the README table says no host port, "
                                       << "docker/docker-compose.yml publishes " << ports.size();
            continue;
        }
        if (ports.size() != 1) {
            ADD_FAILURE() << "service " << name << ": the README table says host port " << row.host_port
                          << ", docker/docker-compose.yml publishes " << ports.size() << " ports";
            continue;
        }
        EXPECT_EQ(ports[0].host_port, row.host_port)
            << "service " << name << ": the README table says host port " << row.host_port
            << ", docker/docker-compose.yml publishes " << (ports[0].host_port.empty() ? "a random one" : ports[0].host_port);
    }
    for (const auto& [name, service] : services_)
        for (const auto& port : ports_of(service))
            EXPECT_EQ(port.host_ip, loopback) << "service " << name << " publishes container port " << port.container_port
                                              << " on " << (port.host_ip.empty() ? "every interface" : port.host_ip)
                                              << ": bind it to 127.0.0.1 (\"127.0.0.1:HOST:CONTAINER\")";
}

TEST_F(DockerCompose, ZooKeeperIsAThreeNodeEnsemble) {
    const auto zk = services_with_image("zookeeper:");
    ASSERT_EQ(zk.size(), 3u) << "ZooKeeper services (image zookeeper:*): " << join(zk);

    std::map<std::string, std::string> id_of;  // service -> ZOO_MY_ID
    std::set<std::string> ids;
    for (const auto& name : zk) {
        const auto env = environment_of(services_.at(name));
        ASSERT_TRUE(env.contains("ZOO_MY_ID")) << "ZooKeeper service " << name << " has no ZOO_MY_ID";
        const auto& id = env.at("ZOO_MY_ID");
        ASSERT_TRUE(!id.empty() && std::ranges::all_of(id, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
            << "ZooKeeper service " << name << ": ZOO_MY_ID '" << id << "' is not a number";
        EXPECT_TRUE(ids.insert(id).second) << "ZooKeeper service " << name << ": ZOO_MY_ID " << id << " is not unique";
        id_of[name] = id;
    }

    // Every node lists every node as server.<its ZOO_MY_ID>=<its service name>:peer:election;client.
    std::set<std::string> expected;
    for (const auto& [name, id] : id_of) expected.insert("server." + id + "=" + name);
    for (const auto& name : zk) {
        const auto env = environment_of(services_.at(name));
        ASSERT_TRUE(env.contains("ZOO_SERVERS")) << "ZooKeeper service " << name << " has no ZOO_SERVERS";
        std::set<std::string> listed;
        for (const auto& entry : shell_words(env.at("ZOO_SERVERS"))) {
            const auto colon = entry.find(':');
            listed.insert(entry.substr(0, colon));
            const auto semicolon = entry.find(';');
            ASSERT_NE(semicolon, std::string::npos)
                << "ZooKeeper service " << name << ": ZOO_SERVERS entry '" << entry << "' has no ';clientPort'";
            const auto ports = ports_of(services_.at(name));
            ASSERT_EQ(ports.size(), 1u) << "ZooKeeper service " << name << " should publish its client port";
            EXPECT_EQ(entry.substr(semicolon + 1), ports[0].container_port)
                << "ZooKeeper service " << name << ": ZOO_SERVERS entry '" << entry
                << "' names a client port that is not the published one";
        }
        EXPECT_EQ(listed, expected) << "ZooKeeper service " << name << ": ZOO_SERVERS lists " << join(listed)
                                    << ", the ensemble is " << join(expected);
    }
}

TEST_F(DockerCompose, RedlockHasFiveIndependentRedisWithoutPersistence) {
    const auto redis = services_with_image("redis:");
    ASSERT_EQ(redis.size(), 5u) << "Redis services (image redis:*): " << join(redis);
    std::set<std::string> host_ports;
    for (const auto& name : redis) {
        const auto port = host_port(name);
        EXPECT_FALSE(port.empty()) << "Redis service " << name << " should publish exactly one host port";
        EXPECT_TRUE(host_ports.insert(port).second) << "Redis service " << name << ": host port " << port << " is taken twice";

        const auto command = command_of(services_.at(name));
        std::vector<std::string> shown;  // the command as a shell would take it ('' for an empty word)
        for (const auto& word : command) shown.push_back(word.empty() ? "''" : word);
        const auto flag = [&](std::string_view option) -> std::optional<std::string> {
            const auto it = std::ranges::find(command, option);
            if (it == command.end() || it + 1 == command.end()) return std::nullopt;
            return *(it + 1);
        };
        EXPECT_EQ(flag("--save"), std::optional<std::string>(""))
            << "Redis service " << name << ": command must say --save \"\" (no RDB snapshots); it is: " << join(shown, " ");
        EXPECT_EQ(flag("--appendonly"), std::optional<std::string>("no"))
            << "Redis service " << name << ": command must say --appendonly no; it is: " << join(shown, " ");
        EXPECT_FALSE(flag("--replicaof") || flag("--slaveof"))
            << "Redis service " << name << " must be an independent master for Redlock";
    }
}

TEST_F(DockerCompose, PostgresUserPasswordAndDatabaseAreZklock) {
    const auto pg = services_with_image("postgres:");
    ASSERT_EQ(pg.size(), 1u) << "PostgreSQL services (image postgres:*): " << join(pg);
    const auto env = environment_of(services_.at(pg[0]));
    for (const char* key : {"POSTGRES_USER", "POSTGRES_PASSWORD", "POSTGRES_DB"}) {
        const auto it = env.find(key);
        EXPECT_EQ(it == env.end() ? "(unset)" : it->second, "zklock") << "service " << pg[0] << ": " << key;
    }
}

TEST_F(DockerCompose, MariadbUserPasswordAndDatabaseAreZklock) {
    const auto maria = services_with_image("mariadb:");
    ASSERT_EQ(maria.size(), 1u) << "MariaDB services (image mariadb:*): " << join(maria);
    const auto env = environment_of(services_.at(maria[0]));
    for (const char* key : {"MARIADB_USER", "MARIADB_PASSWORD", "MARIADB_DATABASE"}) {
        const auto it = env.find(key);
        EXPECT_EQ(it == env.end() ? "(unset)" : it->second, "zklock") << "service " << maria[0] << ": " << key;
    }
    EXPECT_FALSE(host_port(maria[0]).empty()) << "service " << maria[0] << " should publish one host port";
}

TEST_F(DockerCompose, CliServiceIsBuiltAndDependsOnEveryServer) {
    std::vector<std::string> built;
    for (const auto& [name, service] : services_)
        if (service["build"]) built.push_back(name);
    ASSERT_EQ(built, std::vector<std::string>{"zklock"}) << "built services: " << join(built);
    std::set<std::string> servers;
    for (const auto& [name, service] : services_)
        if (name != "zklock") servers.insert(name);
    EXPECT_EQ(dependencies_of(services_.at("zklock")), servers)
        << "the zklock service depends on " << join(dependencies_of(services_.at("zklock")))
        << "; it should depend on every server: " << join(servers);
}

TEST_F(DockerCompose, DockerfileBuildsTheCliOnDebianBookworm) {
    ASSERT_TRUE(fs::exists(dockerfile_path)) << dockerfile_path << " is missing";
    const auto instructions = dockerfile_instructions(read_text(dockerfile_path));
    std::vector<std::string> bases;
    std::string build_steps;
    for (const auto& instruction : instructions) {
        if (starts_with(instruction, "FROM ")) bases.push_back(shell_words(instruction.substr(5)).at(0));
        if (starts_with(instruction, "RUN ")) build_steps += instruction + "\n";
    }
    EXPECT_EQ(bases, std::vector<std::string>{"debian:bookworm"}) << "docker/Dockerfile must be FROM debian:bookworm";
    for (const char* step : {"-DZKLOCK_BUILD_TESTS=OFF", "-DZKLOCK_BUILD_EXAMPLES=OFF", "-DCMAKE_BUILD_TYPE=Release",
                             "cmake --build", "cmake --install"})
        EXPECT_NE(build_steps.find(step), std::string::npos) << "docker/Dockerfile never runs: " << step;
    EXPECT_EQ(build_steps.find("-DZKLOCK_BUILD_TOOLS=OFF"), std::string::npos)
        << "docker/Dockerfile must build the zklock CLI";
    EXPECT_NE(std::ranges::find(instructions, "ENTRYPOINT [\"zklock\"]"), instructions.end())
        << "docker/Dockerfile needs ENTRYPOINT [\"zklock\"]";

    // Debian packages: the build's share of scripts/setup (g++ and make stand in for build-essential).
    const auto installed = apt_installed(instructions);
    EXPECT_FALSE(installed.empty()) << "docker/Dockerfile installs nothing with apt-get install";
    auto allowed = setup_packages(read_text(setup_path));
    allowed.insert({"g++", "make"});
    for (const auto& package : installed)
        EXPECT_TRUE(allowed.contains(package)) << "docker/Dockerfile installs " << package << ", which scripts/setup does not";
    for (const char* server : {"zookeeper", "redis-server", "postgresql", "default-jre-headless"})
        EXPECT_FALSE(installed.contains(server)) << "docker/Dockerfile installs the server package " << server
                                                 << ": the compose services provide the servers";

    ASSERT_TRUE(fs::exists(dockerignore_path)) << ".dockerignore is missing: the build context would carry build trees";
    std::set<std::string> ignored;
    for (const auto& line : lines_of(read_text(dockerignore_path))) ignored.insert(trim(line));
    for (const char* pattern : {"build*/", ".git"})
        EXPECT_TRUE(ignored.contains(pattern)) << ".dockerignore does not exclude " << pattern;
}

TEST_F(DockerCompose, ReadmeBenchCommandUsesTheTablesPorts) {
    EXPECT_NE(section_.find("docker compose -f docker/docker-compose.yml up -d"), std::string::npos)
        << "the README section should say how to start the services";

    std::vector<std::string> words;
    ASSERT_NO_THROW(words = bench_command(section_));
    const auto endpoints = [](std::string_view list) {
        std::set<std::string> set;
        for (const auto& item : split(list, ',')) set.insert(item);
        return set;
    };
    const auto table_endpoints = [&](std::string_view image_prefix) {
        std::set<std::string> set;
        for (const auto& [name, row] : table_)
            if (starts_with(row.image, image_prefix)) set.insert(std::string(loopback) + ":" + row.host_port);
        return set;
    };

    const auto zk = table_endpoints("zookeeper:");
    const auto connect = option_value(words, "-c");
    ASSERT_TRUE(connect) << "the README bench command has no -c";
    EXPECT_EQ(endpoints(*connect), zk) << "the README bench command's -c is " << *connect
                                       << "; the table's ZooKeeper host ports make " << join(zk, ",");

    const auto redis = table_endpoints("redis:");
    const auto redlock = option_value(words, "--redlock");
    ASSERT_TRUE(redlock) << "the README bench command has no --redlock";
    EXPECT_EQ(endpoints(*redlock), redis) << "the README bench command's --redlock is " << *redlock
                                          << "; the table's Redis host ports make " << join(redis, ",");
    const auto single = option_value(words, "--redis");
    ASSERT_TRUE(single) << "the README bench command has no --redis";
    EXPECT_TRUE(redis.contains(*single)) << "the README bench command's --redis " << *single
                                         << " is none of the table's Redis servers: " << join(redis, ",");

    const auto postgres = option_value(words, "--postgres");
    ASSERT_TRUE(postgres) << "the README bench command has no --postgres";
    std::map<std::string, std::string> conninfo;
    for (const auto& pair : shell_words(*postgres)) {
        const auto eq = pair.find('=');
        conninfo[pair.substr(0, eq)] = eq == std::string::npos ? "" : pair.substr(eq + 1);
    }
    std::string pg_port;
    for (const auto& [name, row] : table_)
        if (starts_with(row.image, "postgres:")) pg_port = row.host_port;
    EXPECT_EQ(conninfo["host"], loopback) << "--postgres '" << *postgres << "'";
    EXPECT_EQ(conninfo["port"], pg_port) << "--postgres '" << *postgres << "' against the table's PostgreSQL host port";
    for (const char* key : {"user", "dbname"})
        EXPECT_EQ(conninfo[key], "zklock") << "--postgres '" << *postgres << "': " << key
                                           << " must be the compose file's POSTGRES_* value";
    // The password stays off zklock's command line: the README puts it in a
    // libpq password file (host:port:database:user:password), where it must be
    // the compose file's POSTGRES_PASSWORD for that host port.
    EXPECT_FALSE(conninfo.contains("password")) << "--postgres '" << *postgres << "' puts a password on argv";
    const auto pgpass_line = std::string(loopback) + ":" + pg_port + ":zklock:zklock:zklock";
    EXPECT_NE(section_.find("echo '" + pgpass_line + "' >> ~/.pgpass"), std::string::npos)
        << "the README section should add " << pgpass_line << " to ~/.pgpass";

    // --mysql: the table's MariaDB host port, its database, and no password on
    // argv (the auth file's mysql: line gives the compose file's).
    const auto mysql = option_value(words, "--mysql");
    ASSERT_TRUE(mysql) << "the README bench command has no --mysql";
    std::string maria_port;
    for (const auto& [name, row] : table_)
        if (starts_with(row.image, "mariadb:")) maria_port = row.host_port;
    EXPECT_EQ(*mysql, "mysql://" + std::string(loopback) + ":" + maria_port + "/zklock")
        << "--mysql against the table's MariaDB host port";
    const auto auth = option_value(words, "--auth-file");
    ASSERT_TRUE(auth) << "the README bench command has no --auth-file for the MariaDB password";
    EXPECT_NE(section_.find("echo 'mysql:zklock:zklock' > " + *auth), std::string::npos)
        << "the README section should write mysql:zklock:zklock into " << *auth;
}

}  // namespace
