// zklock: distributed locks on ZooKeeper. The umbrella header.
#pragma once

#include <zklock/error.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/mutex.hpp>
#include <zklock/session.hpp>
