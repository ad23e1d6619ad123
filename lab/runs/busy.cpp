#include "runs/busy.hpp"

#include <iostream>
#include <string>

#include <unistd.h>

namespace zklock::cli {

busy_load::busy_load(int k) {
    // $0 and $1 of the loop: what `ps` and the tests see of it.
    const std::string pid = std::to_string(::getpid());
    for (int i = 0; i < k; ++i)
        spinners_.emplace_back(std::vector<std::string>{"/bin/sh", "-c", "while :; do :; done", "zklock-bench-busy", pid});
    if (k > 0)
        std::cerr << "zklock bench: " << k << (k == 1 ? " CPU-bound process spins" : " CPU-bound processes spin")
                  << " beside the run (--busy " << k << ")\n";
}

} // namespace zklock::cli
