/*  The server's configuration keys: one table for fasgd-server, which
    loads its file with it, and for fasgd-ctl, which reads a server's file
    to find its control endpoint (and links nothing else of the server).  */
#include "server.h"

#include "affinity.h"
#include "shardmap.h"
#include "wire.h"

static const char *const s_log_levels [] = { "error", "warn", "notice", "info", "debug", NULL };
static const char *const s_norm_actions [] = { "refuse", "clip", "auto", NULL };

const fasgd_cfg_key_t fasgd_server_cfg_keys [] = {
    FASGD_CFG_KEY_STRING ("push_endpoint", fasgd_server_cfg_t, push_endpoint, 0, "tcp://*:5555",
        "ZeroMQ endpoint of the push socket (JOIN, PUSH, PUSH_REPEAT, HEARTBEAT, LEAVE, EVAL)"),
    FASGD_CFG_KEY_STRING ("fetch_endpoint", fasgd_server_cfg_t, fetch_endpoint, 0, "tcp://*:5556",
        "ZeroMQ endpoint of the fetch socket (FETCH)"),
    FASGD_CFG_KEY_STRING ("control_endpoint", fasgd_server_cfg_t, control_endpoint, 0, "tcp://127.0.0.1:5557",
        "ZeroMQ endpoint of the control socket (STATUS, CHECKPOINT: fasgd-ctl); empty: none"),
    FASGD_CFG_KEY_STRING ("metrics.endpoint", fasgd_server_cfg_t, metrics_endpoint, 0, "",
        "serve Prometheus metrics over HTTP here, e.g. http://127.0.0.1:9464/metrics (port 0: a free "
        "one, written to the port file); empty: none"),
    FASGD_CFG_KEY_U64 ("seed", fasgd_server_cfg_t, seed, 0, 0, "1", "seed of the initial parameters"),
    FASGD_CFG_KEY_INT ("clients", fasgd_server_cfg_t, clients, 1, 1000000, "16",
        "clients expected: softsync updates every floor(clients/n) gradients"),
    FASGD_CFG_KEY_INCLUDE ("model", fasgd_server_cfg_t, model, fasgd_model_cfg_keys),
    FASGD_CFG_KEY_INT ("shard.count", fasgd_server_cfg_t, shard_count, 1, FASGD_SHARDMAP_MAX, "1",
        "servers the parameters are split across (each runs with the same model and its own "
        "shard.index); 1: this server holds them all"),
    FASGD_CFG_KEY_INT ("shard.index", fasgd_server_cfg_t, shard_index, 0, FASGD_SHARDMAP_MAX - 1, "0",
        "which part this server holds, 0 to shard.count - 1"),
    FASGD_CFG_KEY_STRING ("external.tensors", fasgd_server_cfg_t, external_tensors, 0, "",
        "an external model's tensors, name:SHAPE,... (e.g. conv1.weight:16x1x3x3,conv1.bias:16) in "
        "the order of theta; when set, model.* are unused and clients report validation (EVAL)"),
    FASGD_CFG_KEY_STRING ("external.init", fasgd_server_cfg_t, external_init, 0, "",
        "the external model's initial parameters: a .npy of float32 or raw little-endian float32 "
        "(empty: zeros)"),
    FASGD_CFG_KEY_INCLUDE ("rule", fasgd_server_cfg_t, rule, fasgd_rule_cfg_keys),
    FASGD_CFG_KEY_INCLUDE ("gates", fasgd_server_cfg_t, gates, fasgd_gates_cfg_keys),
    FASGD_CFG_KEY_ENUM ("wire.push", fasgd_server_cfg_t, wire_push, fasgd_wire_names, "f32",
        "how clients send gradients: f32, or bf16 or f16 (2 bytes a value; clients keep the rounding "
        "error and add it to their next gradient)"),
    FASGD_CFG_KEY_ENUM ("wire.params", fasgd_server_cfg_t, wire_params, fasgd_wire_names, "f32",
        "how the server sends the parameters: f32, or rounded to bf16 or f16 (2 bytes a value; the "
        "server keeps float32)"),
    FASGD_CFG_KEY_INCLUDE ("data", fasgd_server_cfg_t, data, fasgd_data_cfg_keys),
    FASGD_CFG_KEY_BOOL ("eval.enabled", fasgd_server_cfg_t, validate, "true",
        "evaluate the parameters on the validation set"),
    FASGD_CFG_KEY_INT ("eval.every", fasgd_server_cfg_t, eval_every, 1, 1000000000, "100",
        "evaluate every this many timestamps (skipped while the last is still running)"),
    FASGD_CFG_KEY_STRING ("eval.csv", fasgd_server_cfg_t, csv, 0, "",
        "CSV file a row per evaluation is appended to (empty: none)"),
    FASGD_CFG_KEY_STRING ("checkpoint.file", fasgd_server_cfg_t, checkpoint, 0, "",
        "checkpoint file (empty: no checkpoints)"),
    FASGD_CFG_KEY_DOUBLE ("checkpoint.seconds", fasgd_server_cfg_t, checkpoint_seconds, 0, 1e9, 0, "60",
        "checkpoint every this many seconds (0: only on exit and by updates)"),
    FASGD_CFG_KEY_U64 ("checkpoint.updates", fasgd_server_cfg_t, checkpoint_updates, 0, 1e15, "0",
        "checkpoint every this many timestamps (0: off)"),
    FASGD_CFG_KEY_INT ("heartbeat.interval_ms", fasgd_server_cfg_t, heartbeat_ms, 10, 3600000, "1000",
        "how often clients send a heartbeat when otherwise silent"),
    FASGD_CFG_KEY_INT ("heartbeat.expiry_ms", fasgd_server_cfg_t, expiry_ms, 20, 86400000, "10000",
        "a client silent this long is expired and its state freed"),
    FASGD_CFG_KEY_DOUBLE ("log.status_seconds", fasgd_server_cfg_t, status_seconds, 0, 1e6, 0, "10",
        "a one-line status every this many seconds (0: off)"),
    FASGD_CFG_KEY_U64 ("limits.cache_bytes", fasgd_server_cfg_t, max_cache_bytes, 0, 1e15, "4294967296",
        "memory for resend-last gradient caches, all clients together; past it JOIN is refused"),
    FASGD_CFG_KEY_U64 ("limits.snapshot_bytes", fasgd_server_cfg_t, max_snapshot_bytes, 0, 1e15, "4294967296",
        "memory for the copies of theta the clients computed on (rules dcasgd and gap-aware need them), "
        "counted as one a client, all clients together; past it JOIN is refused"),
    FASGD_CFG_KEY_DOUBLE ("limits.grad_norm", fasgd_server_cfg_t, grad_norm, 0, 1e30, 0, "0",
        "a pushed gradient whose L2 norm is above this is refused (or clipped: limits.grad_norm_action); "
        "0: no fixed bound"),
    FASGD_CFG_KEY_DOUBLE ("limits.grad_norm_factor", fasgd_server_cfg_t, grad_norm_factor, 0, 1e30, 0, "10",
        "... or above this many times the median of the clients' typical gradient norms (one vote each; "
        "one a CURVE key; without CURVE one address's ids share one) "
        "and the run's history (one vote); 0: off"),
    FASGD_CFG_KEY_ENUM ("limits.grad_norm_action", fasgd_server_cfg_t, grad_norm_action, s_norm_actions, "auto",
        "refuse (422) or clip (scale down to the bound) a gradient above either bound; auto: clip "
        "while the guard judges direction (the clipped push is then judged), refuse otherwise"),
    FASGD_CFG_KEY_INT ("limits.refusals", fasgd_server_cfg_t, max_refusals, 0, 1000000000, "10",
        "a client with this many gradients in a row refused is forgotten (its next request gets 401); "
        "0: never"),
    FASGD_CFG_KEY_BOOL ("guard.enabled", fasgd_server_cfg_t, guard_enabled, "true",
        "false: pushes reach the rule unjudged; it still refuses NaN and Inf, but no size, direction or "
        "overflow is checked (to measure what the guard costs; never with clients you do not control)"),
    FASGD_CFG_KEY_INT ("guard.examples", fasgd_server_cfg_t, guard_examples, 0, 100000, "128",
        "examples of the validation set the server computes its reference gradient on, which judges "
        "every push's direction (built-in model with eval.enabled; 0: no reference, sizes only)"),
    FASGD_CFG_KEY_INT ("guard.every", fasgd_server_cfg_t, guard_every, 1, 1000000000, "16",
        "pushes judged (applied or not) between two reference gradients while each was applied in full from a "
        "client in good standing, and the next is one's too; half as many otherwise"),
    FASGD_CFG_KEY_INT ("guard.pool", fasgd_server_cfg_t, guard_pool, 1, 100000000, "2048",
        "validation examples the reference batches are drawn from, at random"),
    FASGD_CFG_KEY_DOUBLE ("guard.cost", fasgd_server_cfg_t, guard_cost, 0, 1e6, 0, "0.01",
        "what size costs in a push's score: kappa times its norm over an honest one's, squared, less 1 "
        "(a push no larger than an honest one costs nothing)"),
    FASGD_CFG_KEY_DOUBLE ("guard.trust", fasgd_server_cfg_t, guard_trust, 0, 1e6, FASGD_CFG_MIN_OPEN, "0.01",
        "a client's pushes count in full, during its probation, while its mean score is at least this "
        "(after it, down to minus two standard errors of the mean, at least a quarter of this each)"),
    FASGD_CFG_KEY_DOUBLE ("guard.refuse", fasgd_server_cfg_t, guard_refuse, 0, 1e30, FASGD_CFG_MIN_OPEN, "4",
        "a push whose score is below minus this (times 1 + tau/guard.stale) is refused with 422"),
    FASGD_CFG_KEY_DOUBLE ("guard.stale", fasgd_server_cfg_t, guard_stale, 0, 1e30, FASGD_CFG_MIN_OPEN, "16",
        "the staleness at which guard.refuse's threshold is twice as far"),
    FASGD_CFG_KEY_DOUBLE ("guard.span", fasgd_server_cfg_t, guard_span, 1, 1e6, 0, "4",
        "the norm bound follows the clients' median between half the reference's norm and this many times it"),
    FASGD_CFG_KEY_INT ("guard.address_votes", fasgd_server_cfg_t, guard_address_votes, 0, 1000000, "1",
        "without CURVE, the votes the client ids of one source address share in the norm bound's median "
        "(m ids weigh min(m, this)/m each), so that a flood of ids from one host has no more; set it to "
        "the clients one honest host runs (0: every id a vote)"),
    FASGD_CFG_KEY_ENUM ("guard.staleness", fasgd_server_cfg_t, guard_staleness, fasgd_staleness_names, "movement",
        "the staleness tau the rule divides by: count (the updates since the push's parameters, as in "
        "the simulator) or movement (each update counted by its norm over an honest one's, at most 1, "
        "so that pushes that move the parameters by next to nothing do not slow the others)"),
    FASGD_CFG_KEY_DOUBLE ("guard.probation", fasgd_server_cfg_t, guard_probation, 0, 1e9, 0, "16",
        "a client's first pushes that are judged and counted but not applied (acknowledged with 200)"),
    FASGD_CFG_KEY_STRING ("guard.trusted", fasgd_server_cfg_t, guard_trusted, 0, "",
        "a directory of client certificates (public NAME.key files, as security.curve.clients) whose "
        "pushes serve as the direction reference where the server computes none (an external model, a "
        "shard, no validation set); needs CURVE, re-read by fasgd-ctl reload (empty: none)"),
    FASGD_CFG_KEY_INT ("guard.trusted_age", fasgd_server_cfg_t, guard_trusted_age, 1, 1000000000, "256",
        "a trusted push judges the pushes computed within this many updates of its parameters; a push "
        "further from every trusted one is checked for size only"),
    FASGD_CFG_KEY_INT ("guard.loss_examples", fasgd_server_cfg_t, guard_loss_examples, 0, 100000, "256",
        "examples of guard.pool, drawn once and fixed, on which the server measures the loss at every "
        "reference gradient, to see whether it rises after a client's applied pushes (0: no such check)"),
    FASGD_CFG_KEY_DOUBLE ("guard.loss_rise", fasgd_server_cfg_t, guard_loss_rise, 0, 1e6, FASGD_CFG_MIN_OPEN, "0.2",
        "a client whose applied pushes were followed by a rise of the held-out loss above this (the log "
        "of its ratio, over about its last 256 pushes) has its pushes' weight cut, to an eighth of its pushes "
        "at twice this"),
    FASGD_CFG_KEY_DOUBLE ("guard.loss_jump", fasgd_server_cfg_t, guard_loss_jump, 0, 1e6, 0, "1",
        "a rise of the held-out loss between two reference gradients above this (the log of its ratio) "
        "sets the parameters back to where they were at the first (0: never)"),
    FASGD_CFG_KEY_INT ("limits.clients", fasgd_server_cfg_t, max_clients, 1, 10000000, "10000",
        "clients joined at once; a JOIN beyond is refused with 503"),
    FASGD_CFG_KEY_INT ("limits.connections", fasgd_server_cfg_t, max_connections, 0, 10000000, "0",
        "TCP connections peers may hold open at once on the three sockets; one beyond is closed as it "
        "is accepted; 0: 4 x limits.clients + 64, within the file descriptors the server may open"),
    FASGD_CFG_KEY_INT ("limits.greeting_ms", fasgd_server_cfg_t, greeting_ms, 100, 600000, "5000",
        "a push or fetch connection that has not completed its handshake (ZMTP's, and CURVE's) and sent "
        "a valid request this many ms after it was accepted is closed"),
    FASGD_CFG_KEY_INT ("limits.greeting_connections", fasgd_server_cfg_t, max_greeting, 0, 10000000, "0",
        "push and fetch connections not yet through that at once: a new one beyond closes the oldest, so "
        "that peers that never greet cannot take the room kept for those that did; 0: half of "
        "limits.connections"),
    FASGD_CFG_KEY_INT ("limits.greeting_per_address", fasgd_server_cfg_t, greeting_per_address, 1, 10000000,
        "256", "of those, the most from one source address (IPv6: one /64); one beyond is turned away"),
    FASGD_CFG_KEY_INT ("limits.status_clients", fasgd_server_cfg_t, status_clients, 0, 10000000, "1000",
        "clients a STATUS reply lists, those with the most pushes first (clients_listed says how many)"),
    FASGD_CFG_KEY_DOUBLE ("limits.bandwidth", fasgd_server_cfg_t, bandwidth, 0, 1e15, 0, "0",
        "bytes/s the server's link may carry, in and out together: STATUS estimates how many more "
        "clients fit (0: no budget)"),
    FASGD_CFG_KEY_BOOL ("turns.enabled", fasgd_server_cfg_t, turns, "false",
        "send the parameters' replies one connection at a time, the next once TCP has sent the one "
        "before: on a link the clients share they then get theta one after another, not all together, "
        "and fall out of step"),
    FASGD_CFG_KEY_INT ("turns.hold_ms", fasgd_server_cfg_t, turns_hold_ms, 1, 3600000, "2000",
        "the longest one reply holds the next, and the bound of every turn until one has ended by itself; "
        "a client whose reply held the next for its turn's bound (it reads slowly, or not at all, or its "
        "path is slower than the others') is cut: its next 16 replies go without a turn (in their order, "
        "holding no one), twice as many after each further cut"),
    FASGD_CFG_KEY_DOUBLE ("turns.hold_factor", fasgd_server_cfg_t, turns_hold_factor, 0, 1000, 0, "4",
        "a turn's bound: this many times the shortest turn lately that ended by itself, within "
        "turns.hold_min_ms and turns.hold_ms (0: turns.hold_ms alone)"),
    FASGD_CFG_KEY_INT ("turns.hold_min_ms", fasgd_server_cfg_t, turns_hold_min_ms, 1, 3600000, "500",
        "the least bound of a turn (turns.hold_ms when above it)"),
    FASGD_CFG_KEY_INT ("turns.reader_ms", fasgd_server_cfg_t, turns_reader_ms, 0, 3600000, "200",
        "a turn during which the client's full receive window kept TCP from sending for this long (it does not "
        "read, or reads slowly) is cut then, whatever its bound (0: never)"),
    FASGD_CFG_KEY_DOUBLE ("turns.slow_factor", fasgd_server_cfg_t, turns_slow_factor, 0, 1000, 0, "4",
        "a client whose turns take, on average, more than this many times the others' lately (and more than "
        "turns.slow_min_ms) has a path slower than theirs: its next 16 replies go without a turn (in their "
        "order, sharing the link), and the 17th takes one to measure it again (0: never)"),
    FASGD_CFG_KEY_INT ("turns.slow_min_ms", fasgd_server_cfg_t, turns_slow_min_ms, 0, 3600000, "10",
        "a client whose turns take less than this on average keeps them, however many times the others' "
        "they take"),
    FASGD_CFG_KEY_U64 ("turns.lead_bytes", fasgd_server_cfg_t, turns_lead_bytes, 0, 1e12, "0",
        "the next reply goes once TCP has this many bytes or fewer of the one before left to send (0: once "
        "it has sent all of it, which the qdisc's queue then carries on while the next starts)"),
    FASGD_CFG_KEY_INT ("turns.queue", fasgd_server_cfg_t, turns_queue, 1, 1000000, "256",
        "replies waiting for their turn at most; one more is sent at once"),
    FASGD_CFG_KEY_STRING ("security.curve.server_cert", fasgd_server_cfg_t, curve_cert, 0, "",
        "the server's secret CURVE certificate (fasgd-ctl keygen's NAME.key_secret): encrypts and "
        "authenticates the push, fetch and control sockets (empty: no CURVE)"),
    FASGD_CFG_KEY_STRING ("security.curve.clients", fasgd_server_cfg_t, curve_clients, 0, "",
        "a directory of the client certificates allowed to connect (public NAME.key files), "
        "re-read by fasgd-ctl reload"),
    FASGD_CFG_KEY_BOOL ("security.curve.allow_any", fasgd_server_cfg_t, curve_allow_any, "false",
        "CURVE encryption for any client key, without an allowlist"),
    FASGD_CFG_KEY_INT ("cpu", fasgd_server_cfg_t, cpu, -1, FASGD_CPU_MAX, "-1",
        "pin the update loop and ZeroMQ's I/O thread to this CPU, so that handing a message between "
        "them wakes no other CPU (-1: no pinning); validation still runs on every CPU allowed"),
    FASGD_CFG_KEY_ENUM ("log.level", fasgd_server_cfg_t, log_level, s_log_levels, "notice",
        "error, warn, notice, info or debug"),
    FASGD_CFG_KEY_BOOL ("log.syslog", fasgd_server_cfg_t, log_syslog, "false",
        "log to syslog instead of standard error"),
    FASGD_CFG_KEY_END
};
