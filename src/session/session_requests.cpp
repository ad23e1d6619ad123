// The thin asynchronous wrappers over the C client's requests the recipes
// call: each completion runs on the session's strand, exactly once.
#include "session/session_impl.hpp"

#include "fsm/path.hpp"

#include <algorithm>

namespace zklock::detail {
namespace {

std::vector<std::string> to_vector(const String_vector* v) {
    std::vector<std::string> out;
    if (v) {
        out.reserve(static_cast<std::size_t>(v->count));
        for (int i = 0; i < v->count; ++i) out.emplace_back(v->data[i]);
    }
    return out;
}

} // namespace

c_acl::c_acl(acl_list acl) : entries_(std::move(acl)) {
    data_.reserve(entries_.size());
    for (auto& e : entries_)
        data_.push_back(ACL{static_cast<std::int32_t>(e.perms), Id{e.scheme.data(), e.id.data()}});
    vector_.count = static_cast<std::int32_t>(data_.size());
    vector_.data = data_.data();
}

void session_impl::create(const std::string& path, const std::string& data, int flags, const c_acl& acl,
                          string_stat_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_acreate2(
            zh_, path.c_str(), data.data(), static_cast<int>(data.size()), acl.get(), flags,
            [](int rc, const char* value, const Stat* stat, const void* d) {
                auto r = request<string_stat_fn>::take(d, rc);
                r->fn(rc, rc == ZOK && value ? std::string(value) : std::string(), stat_of(stat));
            },
            ctx);
    });
}

void session_impl::get_children(const std::string& path, children_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aget_children(zh_, path.c_str(), 0, &session_impl::on_children, ctx);
    });
}

void session_impl::list_shared(const std::string& path, listing_batches::answer_fn fn) {
    if (listings_.ask(path, std::move(fn))) send_shared_listing(path);
}

void session_impl::send_shared_listing(const std::string& path) {
    get_children(path, [this, path](int rc, std::vector<std::string> children) {
        if (listings_.answer(path, rc, children)) send_shared_listing(path);
    });
}

void session_impl::on_children(int rc, const String_vector* strings, const void* data) {
    auto r = request<children_fn>::take(data);
    r->fn(rc, rc == ZOK ? to_vector(strings) : std::vector<std::string>{});
}

std::uint64_t session_impl::register_watch(watch_fn fn) {
    const auto id = next_id_++;
    watches_.emplace(id, std::move(fn));
    return id;
}

void session_impl::on_node_watch(zhandle_t* zh, int type, int, const char*, void* ctx) {
    ++delivered_here;
    // Session events reach every registered watcher in the C client; the session
    // watcher handles them. A node event fires a watch once.
    if (type == ZOO_SESSION_EVENT) return;
    auto* self = static_cast<session_impl*>(const_cast<void*>(zoo_get_context(zh)));
    if (!self || self->closing_ || zh != self->zh_) return;
    const auto it = self->watches_.find(reinterpret_cast<std::uintptr_t>(ctx));
    if (it == self->watches_.end()) return;
    auto fn = std::move(it->second);
    self->watches_.erase(it);
    fn(type);
}

void session_impl::get_children_watch(const std::string& path, watch_fn on_watch, children_fn fn) {
    const auto wid = register_watch(std::move(on_watch));
    // A listing that fails sets no watch: forget its registration.
    fn = [this, wid, fn = std::move(fn)](int rc, std::vector<std::string> children) {
        if (rc != ZOK) watches_.erase(wid);
        fn(rc, std::move(children));
    };
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_awget_children(zh_, path.c_str(), &session_impl::on_node_watch,
                                  reinterpret_cast<void*>(static_cast<std::uintptr_t>(wid)), &session_impl::on_children,
                                  ctx);
    });
}

void session_impl::get_data(const std::string& path, watch_fn on_watch, data_fn fn) {
    std::uint64_t wid = 0;
    if (on_watch) {
        wid = register_watch(std::move(on_watch));
        // A getData that fails sets no watch: forget its registration.
        fn = [this, wid, fn = std::move(fn)](int rc, std::string data, const node_stat& st) {
            if (rc != ZOK) watches_.erase(wid);
            fn(rc, std::move(data), st);
        };
    }
    submit(std::move(fn), [&](const void* ctx) {
        auto completion = [](int rc, const char* value, int len, const Stat* stat, const void* d) {
            auto r = request<data_fn>::take(d);
            std::string data;
            if (rc == ZOK && value && len > 0) data.assign(value, static_cast<std::size_t>(len));
            r->fn(rc, std::move(data), stat_of(stat));
        };
        return wid ? zoo_awget(zh_, path.c_str(), &session_impl::on_node_watch,
                               reinterpret_cast<void*>(static_cast<std::uintptr_t>(wid)), completion, ctx)
                   : zoo_aget(zh_, path.c_str(), 0, completion, ctx);
    });
}

void session_impl::sync(const std::string& path, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_async(
            zh_, path.c_str(), [](int rc, const char*, const void* d) { request<void_fn>::take(d, rc)->fn(rc); }, ctx);
    });
}

void session_impl::on_void(int rc, const void* data) {
    auto r = request<void_fn>::take(data, rc);
    r->fn(rc);
}

void session_impl::remove(const std::string& path, int version, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_adelete(zh_, path.c_str(), version, &session_impl::on_void, ctx);
    });
}

void session_impl::set_data(const std::string& path, const std::string& data, int version, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aset(
            zh_, path.c_str(), data.data(), static_cast<int>(data.size()), version,
            [](int rc, const Stat*, const void* d) { request<void_fn>::take(d, rc)->fn(rc); }, ctx);
    });
}

std::uint64_t session_impl::exists(const std::string& path, watch_fn on_watch, stat_fn fn) {
    std::uint64_t wid = 0;
    if (on_watch) {
        wid = register_watch(std::move(on_watch));
        // exists leaves a watch when it succeeds and when the node is absent.
        fn = [this, wid, fn = std::move(fn)](int rc, const node_stat& st) {
            if (rc != ZOK && rc != ZNONODE) watches_.erase(wid);
            fn(rc, st);
        };
    }
    submit(std::move(fn), [&](const void* ctx) {
        auto completion = [](int rc, const Stat* stat, const void* d) {
            request<stat_fn>::take(d)->fn(rc, stat_of(stat));
        };
        return wid ? zoo_awexists(zh_, path.c_str(), &session_impl::on_node_watch,
                                  reinterpret_cast<void*>(static_cast<std::uintptr_t>(wid)), completion, ctx)
                   : zoo_aexists(zh_, path.c_str(), 0, completion, ctx);
    });
    return wid;
}

void session_impl::remove_watch(const std::string& path, std::uint64_t wid) {
    if (wid == 0 || watches_.erase(wid) == 0) return;  // fired, failed, or never set
    // removeWatches for the path's data watches: the server forgets them too
    // (the C client's removal of one watcher only checks the server's). The
    // path is one only this watch watches (a node's `.released` sibling).
    // The completion is a void_completion_t passed where the header declares a
    // pointer to one: the C client stores and calls it as the function itself.
    void_completion_t completion = [](int rc, const void* d) { request<void_fn>::take(d, rc)->fn(rc); };
    submit(void_fn([](int) {}), [&](const void* ctx) {
        return zoo_aremove_all_watches(zh_, path.c_str(), ZWATCHTYPE_DATA, 0,
                                       reinterpret_cast<void_completion_t*>(completion), ctx);
    });
}

void session_impl::ensure_parents(const std::string& path, const std::string& data, std::shared_ptr<const c_acl> acl,
                                  std::function<void(int rc, const std::string& failed_path)> fn) {
    // The directory alone first: its ancestors are there in the common case (a
    // lock directory the server reaped, a new lock under a known parent), and
    // every create the server refuses still costs it a logged write. Only when
    // the directory's parent is missing too are all ancestors created.
    const auto& a = *acl;
    create(path, data, ZOO_CONTAINER, a,
           [self = shared_from_this(), path, data, acl = std::move(acl), fn = std::move(fn)](
               int rc, std::string, const node_stat&) mutable {
               if (rc == ZOK || rc == ZNODEEXISTS) return fn(ZOK, {});
               // A top-level directory has no ancestors to make: its NONODE
               // is the chroot's, said at once.
               if (rc != ZNONODE || detail::ancestors(path).empty()) return fn(rc, path);
               self->ensure_ancestors(path, data, *acl, std::move(fn));
           });
}

void session_impl::ensure_ancestors(const std::string& path, const std::string& data, const c_acl& acl,
                                    std::function<void(int rc, const std::string& failed_path)> fn) {
    // All creates are pipelined; the session runs them in order, so each
    // ancestor exists before its child is created. NODEEXISTS is success.
    auto ancestors = detail::ancestors(path);
    ancestors.push_back(path);
    const std::string empty;
    struct state {
        std::size_t remaining;
        int first_error = ZOK;
        std::string failed_path;
        std::function<void(int, const std::string&)> fn;
    };
    auto st = std::make_shared<state>(state{ancestors.size(), ZOK, {}, std::move(fn)});
    for (const auto& p : ancestors) {
        create(p, p == path ? data : empty, ZOO_CONTAINER, acl, [st, p](int rc, std::string, const node_stat&) {
            if (rc != ZOK && rc != ZNODEEXISTS && st->first_error == ZOK) {
                st->first_error = rc;
                st->failed_path = p;
            }
            if (--st->remaining == 0) st->fn(st->first_error, st->failed_path);
        });
    }
}

void session_impl::multi(std::vector<multi_op> ops, multi_fn fn) {
    multi_with_stats(std::move(ops), [fn = std::move(fn)](int rc, std::vector<int> errors,
                                                          std::vector<std::string> created, std::vector<node_stat>) {
        fn(rc, std::move(errors), std::move(created));
    });
}

void session_impl::multi_with_stats(std::vector<multi_op> ops, multi_stat_fn fn) {
    // The C client writes each op's result (a create's path, a set_data's
    // Stat) into arrays that must live until the completion: they live in
    // the callback.
    struct call {
        std::vector<multi_op> ops;
        std::vector<zoo_op_result_t> results;
        std::vector<std::vector<char>> paths;
        std::vector<Stat> stats;
        multi_stat_fn fn;
    };
    auto c = std::make_shared<call>();
    c->ops = std::move(ops);
    c->fn = std::move(fn);
    c->results.resize(c->ops.size(), zoo_op_result_t{});
    const auto any = [&](multi_op::kind k) {
        return std::any_of(c->ops.begin(), c->ops.end(), [k](const multi_op& op) { return op.type == k; });
    };
    // Only a create has a path to return (a release's multi has none), only a set_data a Stat.
    if (any(multi_op::kind::create)) c->paths.resize(c->ops.size());
    if (any(multi_op::kind::set_data)) c->stats.resize(c->ops.size(), Stat{});
    std::vector<zoo_op_t> zops(c->ops.size());
    for (std::size_t i = 0; i < c->ops.size(); ++i) {
        const auto& op = c->ops[i];
        switch (op.type) {
        case multi_op::kind::create:
            // Room for the sequence the server appends (and a chroot, whatever the client does with it).
            c->paths[i].assign(op.path.size() + options_.connect.size() + 32, '\0');
            zoo_create_op_init(&zops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()),
                               (op.acl ? op.acl : acl_)->get(), op.flags, c->paths[i].data(),
                               static_cast<int>(c->paths[i].size()));
            break;
        case multi_op::kind::remove: zoo_delete_op_init(&zops[i], op.path.c_str(), op.version); break;
        case multi_op::kind::check: zoo_check_op_init(&zops[i], op.path.c_str(), op.version); break;
        case multi_op::kind::set_data:
            zoo_set_op_init(&zops[i], op.path.c_str(), op.data.data(), static_cast<int>(op.data.size()), op.version,
                            &c->stats[i]);
            break;
        }
    }
    void_fn done = [c](int rc) {
        std::vector<int> errors;
        std::vector<std::string> created;
        std::vector<node_stat> stats;
        errors.reserve(c->ops.size());
        created.reserve(c->ops.size());
        stats.reserve(c->ops.size());
        for (std::size_t i = 0; i < c->ops.size(); ++i) {
            errors.push_back(c->results[i].err);
            const bool made = rc == ZOK && c->ops[i].type == multi_op::kind::create;
            created.emplace_back(made ? std::string(c->paths[i].data()) : std::string());
            const bool set = rc == ZOK && c->ops[i].type == multi_op::kind::set_data;
            stats.push_back(set ? stat_of(&c->stats[i]) : node_stat{});
        }
        c->fn(rc, std::move(errors), std::move(created), std::move(stats));
    };
    submit(std::move(done), [&](const void* ctx) {
        return zoo_amulti(zh_, static_cast<int>(zops.size()), zops.data(), c->results.data(), &session_impl::on_void,
                          ctx);
    });
}

void session_impl::set_acl(const std::string& path, int version, const c_acl& acl, void_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aset_acl(zh_, path.c_str(), version, const_cast<ACL_vector*>(acl.get()), &session_impl::on_void,
                            ctx);
    });
}

void session_impl::get_acl(const std::string& path, acl_fn fn) {
    submit(std::move(fn), [&](const void* ctx) {
        return zoo_aget_acl(
            zh_, path.c_str(),
            [](int rc, ACL_vector* acl, Stat*, const void* d) {
                auto r = request<acl_fn>::take(d);
                acl_list out;
                if (rc == ZOK && acl) {
                    for (int i = 0; i < acl->count; ++i)
                        out.push_back({acl->data[i].id.scheme ? acl->data[i].id.scheme : "",
                                       acl->data[i].id.id ? acl->data[i].id.id : "",
                                       static_cast<std::uint32_t>(acl->data[i].perms)});
                }
                r->fn(rc, std::move(out));
            },
            ctx);
    });
}

} // namespace zklock::detail
