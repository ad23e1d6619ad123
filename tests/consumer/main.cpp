// Links against an installed zklock and calls something that needs no server.
#include <zklock/error.hpp>

#include <cstdlib>
#include <iostream>
#include <string>

int main() {
    const std::string message = zklock::make_error_code(zklock::errc::invalid_path).message();
    std::cout << "zklock::errc::invalid_path: " << message << '\n';
    return message.empty() ? EXIT_FAILURE : EXIT_SUCCESS;
}
