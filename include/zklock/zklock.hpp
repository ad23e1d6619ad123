// zklock: distributed locks on ZooKeeper. The umbrella header.
#pragma once

#include <zklock/acl.hpp>
#include <zklock/diagnostics.hpp>
#include <zklock/error.hpp>
#include <zklock/fencing.hpp>
#include <zklock/guarded_write.hpp>
#include <zklock/leader_election.hpp>
#include <zklock/lock_events.hpp>
#include <zklock/lock_path.hpp>
#include <zklock/lock_stats.hpp>
#include <zklock/log.hpp>
#include <zklock/multi_mutex.hpp>
#include <zklock/mutex.hpp>
#include <zklock/node_names.hpp>
#include <zklock/queue_view.hpp>
#include <zklock/queue_watch.hpp>
#include <zklock/revocation.hpp>
#include <zklock/secrets.hpp>
#include <zklock/semaphore.hpp>
#include <zklock/session.hpp>
#include <zklock/shared_mutex.hpp>
#include <zklock/version.hpp>
