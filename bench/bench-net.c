/*  bench-net: push→fetch steps per second through fasgd-server on
    loopback TCP, next to what the machine's memory and loopback TCP can
    move, measured in the same run.

    A step is what an asynchronous SGD client does once per minibatch: PUSH
    a gradient of D float32 computed at the timestamp j of its last fetch,
    wait for the ACK, FETCH, wait for PARAMS (D float32) and take their
    timestamp as the next j: two round trips. With --trips 1 the PUSH
    carries THEN_FETCH and its reply is the PARAMS: one round trip. Each
    step moves 2·4·D bytes either way.

    For every model size and rule the benchmark starts its own fasgd-server
    (fork/exec of the built daemon, ephemeral ports on 127.0.0.1, read back
    from --port-file), then measures every row alike: for each of R
    rounds, a sample of one loopback TCP connection's rate, then 1, 4,
    16... new client threads, each with its own pair of DEALER sockets,
    joined with JOIN, that warm up and count steps over one interval; the
    table gives the median over the rounds and their spread. The gradient
    is one read-only buffer of small finite values at the start of a page,
    sent without a copy (as a zero-copy parameter-server client would);
    each reply's θ is copied into the client's own buffer, as fasgd-client
    and ps-lite's pull do (--no-copy: dropped in ZeroMQ's buffer).

    Next to each rate it prints the CPU time a step cost the server process
    and the clients (from /proc, so a comparison survives a neighbour's
    load better than the rate does), the range of the TCP samples as steps
    a second (tcp-bound), and, once per run, the throughput of memcpy on
    buffers of 4·D bytes.

    The reference is ps-lite (C++ over ZeroMQ, zero-copy push then pull,
    the server applying θ −= α·g), measured in the same run: with --pslite
    DIR (its harness, see pslite.h), every round of the asgd rows of two
    trips has a ps-lite round of the same D, clients and seconds beside it
    (before it or after it, in turn), whose correctness check must pass;
    ps-lite gets a row of its own (its server's and workers' CPU a step
    from /proc), and x-pslite is the median of the per-round ratios. The
    rules' rows of one number of trips and clients are measured together,
    each rule a server of its own, their rounds in turn (the order
    reversed every other round), so that vs-asgd and vs-bare are medians
    of per-round ratios too. The goals are asgd ≥ 1.5× ps-lite, and fasgd
    at least 0.9× of fasgd-server's own asgd. Rule "bare" runs, in place of
    fasgd-server, this program's own minimal server (the same sockets and
    messages with only θ −= α·g behind them, θ copied into each reply as
    ps-lite's pull handler copies it), so that what the stack itself allows
    on this machine is measured in the same run: vs-bare.

    A rule named with "+curve" (asgd+curve) runs the same server with
    CURVE on (security.curve.allow_any, a server key made for the run) and
    clients that speak CURVE with keys of their own: its vs-asgd column is
    then what encrypting every byte costs, next to plain asgd in the same
    run.

    A rule named with "+bf16" or "+f16" (asgd+bf16) runs the same server
    with the compact wire both ways (wire.push and wire.params): its
    clients round their gradient to 2 bytes a value before each push and
    widen each reply's parameters to float32, as fasgd-client does, and
    its vs-asgd column is what the wire gains or costs next to float32.

    A rule named with "+noguard" (asgd+noguard) runs the same server with
    its push guard off (guard.enabled false): its vs-asgd column is what
    the guard costs. The guard here judges sizes only (no validation set
    is loaded, so there is no reference gradient).

    Usage: bench-net [--server PATH] [--sizes LIST] [--rules LIST]
                     [--clients LIST] [--trips LIST] [--seconds S]
                     [--warmup S] [--rounds R] [--fresh-pages]
                     [--server-cpu N] [--client-cpu N] [--pslite DIR]
                     [--no-copy] [--client-procs | --client-threads]
                     [--grad-offset B]  */
#define _GNU_SOURCE     /* memfd_create */
#include "affinity.h"
#include "bench-util.h"
#include "codec.h"
#include "curve.h"
#include "halves.h"
#include "heap.h"
#include "procs.h"
#include "pslite.h"

#include <arpa/inet.h>
#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#   include <sys/prctl.h>
#endif

#define S_MAX_ROUNDS 15
#define S_MAX_SIZES 8
#define S_MAX_RULES 8
#define S_MAX_COUNTS 8
#define S_MAX_CLIENTS 256
#define S_MAX_LAYERS 8
/*  A reply slower than this means the server is stuck, not slow: even
    10M parameters to 16 clients on a loaded machine take about a second.  */
#define S_REPLY_TIMEOUT_MS 60000
/*  The loopback TCP measurement writes and reads in chunks this large.  */
#define S_TCP_CHUNK (4u << 20)
/*  fasgd-server's learning rate here: with gradients of about 1e-3 and
    fasgd's step amplification of at most 1/sqrt(epsilon) = 100, θ moves
    about 1e-4 a step and stays finite for far longer than any run.  */
#define S_LR "0.001"

/* ------------------------------------------------------------------ */
/*  Model sizes and the reference figures                               */

typedef struct {
    char label [16];
    int layers [S_MAX_LAYERS];
    int nlayers;
    size_t d;
} s_size_t;

/*  D = 79,510, 1,000,900 and 10,099,900.  */
static const struct {
    const char *name;
    const char *layers;
} s_presets [] = {
    { "80k", "784-100-10" },
    { "1m", "1000-990-10" },
    { "10m", "1000-9990-10" },
};

#define S_GOAL_VS_PEER 1.5              /* asgd: at least this × ps-lite */
#define S_GOAL_VS_ASGD 0.9               /* fasgd: at least this × its asgd */
#define S_GOAL_VS_TCP 0.8               /* asgd at D >= 1M: this × tcp-bound too */
#define S_GOAL_TCP_FROM_D 1000000

/*  Parses a preset name or widths joined by '-' ("784-100-10").  */
static int
s_size_parse (const char *text, s_size_t *s)
{
    const char *layers = text;
    for (size_t i = 0; i < sizeof s_presets / sizeof s_presets [0]; i++)
        if (strcmp (text, s_presets [i].name) == 0)
            layers = s_presets [i].layers;
    memset (s, 0, sizeof *s);
    const char *p = layers;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol (p, &end, 10);
        if (end == p || errno == ERANGE || v < 1 || v > 1000000 || s->nlayers == S_MAX_LAYERS
            || (*end && *end != '-'))
            return -1;
        s->layers [s->nlayers++] = (int) v;
        p = *end ? end + 1 : end;
    }
    if (s->nlayers < 2)
        return -1;
    for (int i = 0; i + 1 < s->nlayers; i++)
        s->d += (size_t) s->layers [i] * (size_t) s->layers [i + 1] + (size_t) s->layers [i + 1];
    snprintf (s->label, sizeof s->label, "%zu", s->d);
    return 0;
}

/* ------------------------------------------------------------------ */
/*  The server, as a child process                                      */

typedef struct {
    pid_t pid;
    char dir [64];
    char cfg [128], ports [128], log [128];
    char push [256], fetch [256];
    char server_key [FASGD_CURVE_KEY_LEN + 1];  /* CURVE: the server's public key; "" off */
    int wire;                                   /* 0 float32, else fasgd_wire_t: both ways */
    int place;                                  /* its place in s_children and s_running */
} s_server_t;

static void
s_server_cleanup (const s_server_t *s)
{
    char path [128];
    snprintf (path, sizeof path, "%s/server.key", s->dir);
    unlink (path);
    snprintf (path, sizeof path, "%s/server.key_secret", s->dir);
    unlink (path);
    unlink (s->cfg);
    unlink (s->ports);
    unlink (s->log);
    rmdir (s->dir);
}

/*  The running servers, one a rule of the size being measured, for the
    signal handler.  */
static volatile pid_t s_children [S_MAX_RULES];
static const s_server_t *volatile s_running [S_MAX_RULES];
/*  The client processes running.  */
static volatile pid_t s_client_pids [S_MAX_CLIENTS];

/*  Stops the server and removes its files (kill, unlink and rmdir are
    async-signal-safe), then exits as the signal would have.  */
static void
s_on_signal (int sig)
{
    for (int i = 0; i < S_MAX_RULES; i++)
        if (s_children [i] > 0)
            kill (s_children [i], SIGTERM);
    if (fasgd_pslite_pid > 0)
        kill (fasgd_pslite_pid, SIGTERM);
    for (int i = 0; i < S_MAX_CLIENTS; i++)
        if (s_client_pids [i] > 0)
            kill (s_client_pids [i], SIGTERM);
    for (int i = 0; i < S_MAX_RULES; i++)
        if (s_running [i])
            s_server_cleanup (s_running [i]);
    _exit (128 + sig);
}

/* ------------------------------------------------------------------ */
/*  The bare reference server                                           */

static volatile sig_atomic_t s_bare_stop;

static void
s_bare_on_signal (int sig)
{
    (void) sig;
    s_bare_stop = 1;
}

static void
s_bare_reply (void *sock, zmq_msg_t *id, const fasgd_header_t *req, int type, const float *theta,
              size_t n)
{
    fasgd_header_t h = { .version = FASGD_PROTO_VERSION, .type = (uint8_t) type,
                         .status = FASGD_STATUS_OK, .client_id = req->client_id, .seq = req->seq };
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (&h, head);
    zmq_msg_send (id, sock, ZMQ_SNDMORE);
    zmq_send (sock, head, sizeof head, theta ? ZMQ_SNDMORE : 0);
    if (theta)
        zmq_send (sock, theta, n * sizeof (float), 0);      /* a copy, as ps-lite's pull */
}

/*  What the stack costs without fasgd-server: a process with the same two
    ROUTER sockets and message pattern, answering JOIN, PUSH (θ −= α·g,
    then ACK, or PARAMS with THEN_FETCH), FETCH (PARAMS, θ copied into the
    message) and LEAVE, with no checks, no client registry, no snapshot
    and no statistics: ps-lite's server in miniature. bench-net runs it as
    "rule" bare, in a process of its own like fasgd-server.  */
static int
s_bare_server (const char *ports, size_t n, int cpu)
{
    /*  Pinned as fasgd-server's cpu key pins it, before the first socket.  */
    char err [256];
    if (cpu >= 0 && fasgd_affinity_pin (cpu, NULL, err, sizeof err) != 0) {
        fprintf (stderr, "bench-net --bare-server: %s\n", err);
        return 1;
    }
    fasgd_heap_keep_large_blocks ();     /* as fasgd-server */
    zsys_handler_set (NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_bare_on_signal;
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGINT, &sa, NULL);
    zsys_init ();
    float *theta = calloc (n, sizeof (float));
    zsock_t *push = zsock_new (ZMQ_ROUTER), *fetch = zsock_new (ZMQ_ROUTER);
    if (!theta || !push || !fetch)
        return 1;
    zsock_set_linger (push, 0);
    zsock_set_linger (fetch, 0);
    zsock_set_sndhwm (push, 10000);
    zsock_set_rcvhwm (push, 10000);
    zsock_set_sndhwm (fetch, 10000);
    zsock_set_rcvhwm (fetch, 10000);
    if (zsock_bind (push, "tcp://127.0.0.1:*") < 0 || zsock_bind (fetch, "tcp://127.0.0.1:*") < 0)
        return 1;
    char tmp [160];
    snprintf (tmp, sizeof tmp, "%s.tmp", ports);
    FILE *f = fopen (tmp, "w");
    if (!f)
        return 1;
    fprintf (f, "push=%s\nfetch=%s\n", zsock_endpoint (push), zsock_endpoint (fetch));
    if (fclose (f) != 0 || rename (tmp, ports) != 0)
        return 1;
    const float lr = (float) atof (S_LR);
    uint32_t ids = 0;
    zmq_pollitem_t items [2] = { { zsock_resolve (push), 0, ZMQ_POLLIN, 0 },
                                 { zsock_resolve (fetch), 0, ZMQ_POLLIN, 0 } };
    while (!s_bare_stop) {
        if (zmq_poll (items, 2, 100) <= 0)
            continue;
        for (int k = 0; k < 2; k++) {
            void *sock = items [k].socket;
            zmq_msg_t id, head, body;
            zmq_msg_init (&id);
            if (zmq_msg_recv (&id, sock, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close (&id);
                continue;
            }
            zmq_msg_init (&head);
            zmq_msg_init (&body);
            zmq_msg_recv (&head, sock, 0);
            size_t body_len = 0;
            if (zmq_msg_more (&head) && zmq_msg_recv (&body, sock, 0) >= 0)
                body_len = zmq_msg_size (&body);
            fasgd_header_t req;
            if (fasgd_proto_header_decode (zmq_msg_data (&head), zmq_msg_size (&head), &req) == FASGD_PROTO_OK) {
                switch (req.type) {
                    case FASGD_MSG_JOIN:
                        req.client_id = ++ids;
                        s_bare_reply (sock, &id, &req, FASGD_MSG_WELCOME, NULL, n);
                        break;
                    case FASGD_MSG_PUSH:
                        if (body_len == n * sizeof (float)) {
                            const float *g = zmq_msg_data (&body);
                            for (size_t i = 0; i < n; i++)
                                theta [i] -= lr * g [i];
                        }
                        if (req.flags & FASGD_PROTO_FLAG_THEN_FETCH)
                            s_bare_reply (sock, &id, &req, FASGD_MSG_PARAMS, theta, n);
                        else
                            s_bare_reply (sock, &id, &req, FASGD_MSG_ACK, NULL, n);
                        break;
                    case FASGD_MSG_FETCH:
                        s_bare_reply (sock, &id, &req, FASGD_MSG_PARAMS, theta, n);
                        break;
                    default:
                        s_bare_reply (sock, &id, &req, FASGD_MSG_ACK, NULL, n);
                        break;
                }
            }
            zmq_msg_close (&id);
            zmq_msg_close (&head);
            zmq_msg_close (&body);
        }
    }
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    free (theta);
    zsys_shutdown ();
    return 0;
}

/*  --server-cpu: the CPU the server (fasgd-server's cpu key, or the bare
    server) is pinned to, -1 none. --client-cpu pins this process, and
    s_all_cpus is then what a server should have instead.  */
static int s_server_cpu = -1, s_clients_pinned;
static fasgd_cpus_t s_all_cpus;

/*  Forgets the server in place i, for the signal handler.  */
static void
s_server_forget (int i)
{
    s_children [i] = 0;
    s_running [i] = NULL;
}

/*  Starts exe with a generated configuration for this size and rule, the
    server in place `place` (0 to S_MAX_RULES - 1); waits for its port file. 0,
    or -1 after saying why.  */
static int
s_server_start (s_server_t *s, int place, const char *exe, const s_size_t *size, const char *rule)
{
    memset (s, 0, sizeof *s);
    s->place = place;
    snprintf (s->dir, sizeof s->dir, "/tmp/fasgd-bench-net-XXXXXX");
    if (!mkdtemp (s->dir)) {
        fprintf (stderr, "bench-net: mkdtemp: %s\n", strerror (errno));
        return -1;
    }
    snprintf (s->cfg, sizeof s->cfg, "%s/server.yaml", s->dir);
    snprintf (s->ports, sizeof s->ports, "%s/ports", s->dir);
    snprintf (s->log, sizeof s->log, "%s/log", s->dir);
    FILE *f = fopen (s->cfg, "w");
    if (!f) {
        fprintf (stderr, "bench-net: %s: %s\n", s->cfg, strerror (errno));
        rmdir (s->dir);
        return -1;
    }
    fputs ("push_endpoint: tcp://127.0.0.1:*\n"
           "fetch_endpoint: tcp://127.0.0.1:*\n"
           "control_endpoint: \"\"\n"          /* several benchmarks may run at once */
           "model: {sizes: [", f);
    for (int i = 0; i < size->nlayers; i++)
        fprintf (f, "%s%d", i ? ", " : "", size->layers [i]);
    /*  A long expiry: a client waiting behind 15 others for 10M-parameter
        replies on a loaded machine must not be taken for gone.  */
    fputs ("]}\n"
           "rule: {lr: " S_LR "}\n"
           "eval: {enabled: false}\n"
           "heartbeat: {expiry_ms: 3600000}\n"
           "log: {status_seconds: 0}\n", f);
    if (s_server_cpu >= 0)
        fprintf (f, "cpu: %d\n", s_server_cpu);
    /*  asgd+curve: the rule asgd, CURVE on; asgd+bf16, asgd+f16: the
        compact wire.  */
    char name [64];
    snprintf (name, sizeof name, "%s", rule);
    for (int w = FASGD_WIRE_BF16; w <= FASGD_WIRE_F16; w++) {
        const char *tag = w == FASGD_WIRE_BF16 ? "+bf16" : "+f16";
        char *at = strstr (name, tag);
        if (at) {
            memmove (at, at + strlen (tag), strlen (at + strlen (tag)) + 1);
            s->wire = w;
            fprintf (f, "wire: {push: %s, params: %s}\n", tag + 1, tag + 1);
        }
    }
    char *off = strstr (name, "+noguard");
    if (off) {
        memmove (off, off + strlen ("+noguard"), strlen (off + strlen ("+noguard")) + 1);
        fputs ("guard: {enabled: false}\n", f);
    }
    char *plus = strstr (name, "+curve");
    if (plus) {
        *plus = 0;
        char key [128], err [256];
        snprintf (key, sizeof key, "%s/server.key", s->dir);
        if (fasgd_curve_keygen (key, err, sizeof err) != 0
            || fasgd_curve_public_key_load (key, s->server_key, err, sizeof err) != 0) {
            fprintf (stderr, "bench-net: %s\n", err);
            fclose (f);
            s_server_cleanup (s);
            return -1;
        }
        fprintf (f, "security: {curve: {server_cert: %s_secret, allow_any: true}}\n", key);
    }
    fclose (f);
    char set [80];
    snprintf (set, sizeof set, "rule.name=%s", name);
    char dbuf [32], cbuf [16];
    snprintf (dbuf, sizeof dbuf, "%zu", size->d);
    snprintf (cbuf, sizeof cbuf, "%d", s_server_cpu);
    s->pid = fork ();
    if (s->pid < 0) {
        fprintf (stderr, "bench-net: fork: %s\n", strerror (errno));
        s_server_cleanup (s);
        return -1;
    }
    if (s->pid == 0) {
        /*  Only async-signal-safe calls between fork and exec: the parent
            has ZeroMQ's threads running.  */
#ifdef __linux__
        prctl (PR_SET_PDEATHSIG, SIGTERM);
#endif
        int fd = open (s->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            dup2 (fd, 2);
        if (s_clients_pinned)
            fasgd_affinity_set (&s_all_cpus);       /* a system call */
        if (strcmp (rule, "bare") == 0)
            execl ("/proc/self/exe", "bench-net", "--bare-server", s->ports, dbuf, cbuf, (char *) NULL);
        else
            execl (exe, "fasgd-server", "-c", s->cfg, "--port-file", s->ports, "--set", set, (char *) NULL);
        _exit (127);
    }
    s_running [place] = s;
    s_children [place] = s->pid;
    const char *who = strcmp (rule, "bare") == 0 ? "the bare server" : exe;
    /*  Wait for the port file, never for a fixed sleep; a 10M model takes
        a moment to initialise.  */
    for (int i = 0; i < 6000; i++) {
        FILE *p = fopen (s->ports, "r");
        if (p) {
            int got = fscanf (p, "push=%255s\nfetch=%255s\n", s->push, s->fetch);
            fclose (p);
            if (got == 2)
                return 0;
        }
        int status;
        if (waitpid (s->pid, &status, WNOHANG) == s->pid) {
            fprintf (stderr, "bench-net: %s exited early (status %d); its log: %s\n", who,
                     WIFEXITED (status) ? WEXITSTATUS (status) : -1, s->log);
            s_server_forget (place);
            return -1;
        }
        usleep (10000);
    }
    fprintf (stderr, "bench-net: no port file from %s after 60 s; its log: %s\n", who, s->log);
    kill (s->pid, SIGKILL);
    waitpid (s->pid, NULL, 0);
    s_server_forget (place);
    return -1;
}

/*  SIGTERM, then the exit status (0 a clean stop); removes the files
    unless the server failed.  */
static int
s_server_stop (s_server_t *s)
{
    kill (s->pid, SIGTERM);
    int status = 0, done = 0;
    for (int i = 0; i < 3000 && !done; i++) {
        done = waitpid (s->pid, &status, WNOHANG) == s->pid;
        if (!done)
            usleep (10000);
    }
    if (!done) {
        kill (s->pid, SIGKILL);
        waitpid (s->pid, &status, 0);
    }
    s_server_forget (s->place);
    int rc = done && WIFEXITED (status) ? WEXITSTATUS (status) : -1;
    if (rc == 0)
        s_server_cleanup (s);
    else
        fprintf (stderr, "bench-net: the server stopped with status %d; its log: %s\n", rc, s->log);
    return rc;
}

/* ------------------------------------------------------------------ */
/*  Clients                                                             */

/*  Where what is sent without a copy starts: this many bytes past a
    page's start (--grad-offset). Where malloc puts a large block, 16
    bytes past a page's start, the kernel's copy of each send from it
    took about four times as long on a 2-vCPU AMD EPYC (2026-12-07: the
    client's CPU a step at 1M 3.1 to 3.5 ms, medians, with 16 to 40
    bytes, 2.1 to 2.3 with 0, 8 or 48 to 4,080), which made the client
    the bound of a step on one CPU (bench/net.md, "Where a step's CPU
    goes at 1M, remade").  */
#define S_PAGE 4096
static long s_grad_offset = 0;

/*  A buffer of `bytes` s_grad_offset bytes past a page's start; *base
    is what to free.  */
static void *
s_page_alloc (size_t bytes, void **base)
{
    size_t need = (size_t) s_grad_offset + bytes;
    char *b = aligned_alloc (S_PAGE, (need + S_PAGE - 1) / S_PAGE * S_PAGE);
    *base = b;
    return b ? b + s_grad_offset : NULL;
}

/*  What a client and main share: in memory both map when the client is a
    process of its own.  */
typedef struct {
    int stop;                           /* atomic: set by main */
    int ready;                          /* atomic: joined and holding θ */
    uint64_t steps;                     /* atomic: written by the client, read by main */
    char error [256];                   /* non-empty when the client gave up */
} s_slot_t;

typedef struct {
    const char *push_ep, *fetch_ep;
    const char *server_key;         /* CURVE: the server's public key; "" off */
    size_t n;
    const float *grad;                  /* shared and read-only: sent without a copy */
    int wire;                           /* 0 float32, else fasgd_wire_t: rounded each push, widened each reply */
    int one_trip;                       /* PUSH with THEN_FETCH, no FETCH */
    int copy;                           /* each reply's θ copied into the client's own buffer */
    s_slot_t *slot;                     /* what main and the client share */
    pthread_t tid;
} s_client_t;

static void
s_send_header (void *sock, const fasgd_header_t *h, int more)
{
    uint8_t head [FASGD_PROTO_HEADER_SIZE];
    fasgd_proto_header_encode (h, head);
    zmq_send (sock, head, sizeof head, more ? ZMQ_SNDMORE : 0);
}

/*  Receives one reply: its header into h and the length of its body,
    and the body's first cap bytes into body when it is not NULL; when
    theta is not NULL, the parameters into theta (n floats), as a client
    keeps them: with wire, a body of 2·n bytes widened, else a body of 4·n
    bytes copied. 0, or -1 on a timeout or a malformed header.  */
static int
s_recv_reply_full (void *sock, fasgd_header_t *h, size_t *body_len, char *body, size_t cap, int wire, size_t n,
                   float *theta)
{
    memset (h, 0, sizeof *h);
    *body_len = 0;
    zmq_msg_t m;
    zmq_msg_init (&m);
    if (zmq_msg_recv (&m, sock, 0) < 0) {
        zmq_msg_close (&m);
        return -1;
    }
    int rc = fasgd_proto_header_decode (zmq_msg_data (&m), zmq_msg_size (&m), h);
    int more = zmq_msg_more (&m);
    zmq_msg_close (&m);
    while (more) {
        zmq_msg_init (&m);
        if (zmq_msg_recv (&m, sock, 0) < 0) {
            zmq_msg_close (&m);
            return -1;
        }
        size_t size = zmq_msg_size (&m);
        if (theta && wire && *body_len == 0 && size == 2 * n)
            fasgd_halves_decode (wire, zmq_msg_data (&m), n, theta);
        else if (theta && !wire && *body_len == 0 && size == n * sizeof (float))
            memcpy (theta, zmq_msg_data (&m), size);
        if (body && *body_len < cap)
            memcpy (body + *body_len, zmq_msg_data (&m), size < cap - *body_len ? size : cap - *body_len);
        *body_len += size;
        more = zmq_msg_more (&m);
        zmq_msg_close (&m);
    }
    return rc == FASGD_PROTO_OK ? 0 : -1;
}

static int
s_recv_reply_body (void *sock, fasgd_header_t *h, size_t *body_len, char *body, size_t cap)
{
    return s_recv_reply_full (sock, h, body_len, body, cap, 0, 0, NULL);
}

static int
s_recv_reply (void *sock, fasgd_header_t *h, size_t *body_len)
{
    return s_recv_reply_body (sock, h, body_len, NULL, 0);
}

/*  A DEALER connected to endpoint; with server_key, speaking CURVE with
    cert's keys.  */
static zsock_t *
s_dealer (const char *endpoint, const char *server_key, zcert_t *cert)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    if (!sock)
        return NULL;
    zsock_set_rcvtimeo (sock, S_REPLY_TIMEOUT_MS);
    zsock_set_linger (sock, 0);
    if (*server_key) {
        zcert_apply (cert, sock);
        zsock_set_curve_serverkey (sock, server_key);
    }
    if (zsock_connect (sock, "%s", endpoint) != 0)
        zsock_destroy (&sock);
    return sock;
}

static void *
s_client_main (void *arg)
{
    s_client_t *c = arg;
    zcert_t *cert = zcert_new ();
    zsock_t *push = cert ? s_dealer (c->push_ep, c->server_key, cert) : NULL;
    zsock_t *fetch = cert ? s_dealer (c->fetch_ep, c->server_key, cert) : NULL;
    zcert_destroy (&cert);
    /*  With the compact wire: the push body, rounded anew each step, and
        θ widened from each reply, as a training client must; else, unless
        told not to, θ copied from each reply into the client's own buffer,
        as fasgd-client and ps-lite's pull do.  */
    const size_t bytes = c->n * (c->wire ? 2 : sizeof (float));
    void *half_base = NULL;
    void *half = c->wire ? s_page_alloc (bytes, &half_base) : NULL;
    float *theta = c->wire || c->copy ? malloc (c->n * sizeof (float)) : NULL;
    fasgd_header_t h, r;
    size_t len;
    uint32_t seq = 0, id = 0;
    if (!push || !fetch) {
        snprintf (c->slot->error, sizeof c->slot->error, "cannot connect to %s / %s", c->push_ep, c->fetch_ep);
        goto done;
    }
    if ((c->wire && !half) || ((c->wire || c->copy) && !theta)) {
        snprintf (c->slot->error, sizeof c->slot->error, "out of memory");
        goto done;
    }
    void *ps = zsock_resolve (push), *fs = zsock_resolve (fetch);

    h = (fasgd_header_t) { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_JOIN, .seq = ++seq };
    s_send_header (ps, &h, 1);
    zmq_send (ps, "bench-net", 9, 0);
    static __thread char welcome [FASGD_PROTO_DESC_MAX];
    if (s_recv_reply_body (ps, &r, &len, welcome, sizeof welcome) != 0 || r.type != FASGD_MSG_WELCOME) {
        snprintf (c->slot->error, sizeof c->slot->error, "JOIN: no WELCOME (type %d, status %d)", r.type, r.status);
        goto done;
    }
    id = r.client_id;
    /*  The bare server sends no description and wants no session.  */
    fasgd_proto_desc_t desc = { .session = 0 };
    char why [128];
    if (len > 0 && fasgd_proto_desc_decode (welcome, len, &desc, why, sizeof why) != 0) {
        snprintf (c->slot->error, sizeof c->slot->error, "JOIN: a WELCOME it cannot read: %s", why);
        goto done;
    }
    uint64_t session = desc.session;
    h = (fasgd_header_t) { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_FETCH, .client_id = id,
                           .seq = ++seq, .session = session };
    s_send_header (fs, &h, 0);
    if (s_recv_reply_full (fs, &r, &len, NULL, 0, c->wire, c->n, theta) != 0 || r.type != FASGD_MSG_PARAMS
        || len != bytes) {
        snprintf (c->slot->error, sizeof c->slot->error, "first FETCH: type %d, status %d, %zu bytes (expected %zu)",
                  r.type, r.status, len, bytes);
        goto done;
    }
    uint64_t j = r.timestamp;
    __atomic_store_n (&c->slot->ready, 1, __ATOMIC_RELEASE);

    while (!__atomic_load_n (&c->slot->stop, __ATOMIC_ACQUIRE)) {
        h = (fasgd_header_t) { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_PUSH, .client_id = id,
                               .seq = ++seq, .timestamp = j, .session = session,
                               .flags = c->one_trip ? FASGD_PROTO_FLAG_THEN_FETCH : 0 };
        s_send_header (ps, &h, 1);
        /*  No copy and no free: the buffer outlives every send, and the
            ACK below means the server, hence our I/O thread, is done with it.  */
        zmq_msg_t body;
        if (c->wire)
            fasgd_halves_encode (c->wire, c->grad, c->n, half);
        zmq_msg_init_data (&body, c->wire ? half : (void *) c->grad, bytes, NULL, NULL);
        if (zmq_msg_send (&body, ps, 0) < 0) {
            zmq_msg_close (&body);
            snprintf (c->slot->error, sizeof c->slot->error, "PUSH: %s", zmq_strerror (zmq_errno ()));
            goto done;
        }
        if (c->one_trip) {
            /*  θ after the push comes as the reply.  */
            if (s_recv_reply_full (ps, &r, &len, NULL, 0, c->wire, c->n, theta) != 0 || r.type != FASGD_MSG_PARAMS
                || r.status != FASGD_STATUS_OK
                || len != bytes) {
                snprintf (c->slot->error, sizeof c->slot->error,
                          "PUSH+FETCH at T=%llu: type %d status %d, %zu bytes (expected PARAMS 200, %zu)",
                          (unsigned long long) j, r.type, r.status, len, bytes);
                goto done;
            }
            j = r.timestamp;
            __atomic_add_fetch (&c->slot->steps, 1, __ATOMIC_RELAXED);
            continue;
        }
        if (s_recv_reply (ps, &r, &len) != 0 || r.type != FASGD_MSG_ACK || r.status != FASGD_STATUS_OK) {
            snprintf (c->slot->error, sizeof c->slot->error, "PUSH at T=%llu: type %d status %d (expected ACK 200)",
                      (unsigned long long) j, r.type, r.status);
            goto done;
        }
        h = (fasgd_header_t) { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_FETCH, .client_id = id,
                               .seq = ++seq, .timestamp = j, .session = session };
        s_send_header (fs, &h, 0);
        if (s_recv_reply_full (fs, &r, &len, NULL, 0, c->wire, c->n, theta) != 0 || r.type != FASGD_MSG_PARAMS
            || len != bytes) {
            snprintf (c->slot->error, sizeof c->slot->error, "FETCH: type %d, status %d, %zu bytes (expected %zu)",
                      r.type, r.status, len, bytes);
            goto done;
        }
        j = r.timestamp;
        __atomic_add_fetch (&c->slot->steps, 1, __ATOMIC_RELAXED);
    }
    h = (fasgd_header_t) { .version = FASGD_PROTO_VERSION, .type = FASGD_MSG_LEAVE, .client_id = id,
                           .seq = ++seq, .session = session };
    s_send_header (ps, &h, 0);
    s_recv_reply (ps, &r, &len);
done:
    /*  A failed client counts as ready so that main stops waiting.  */
    __atomic_store_n (&c->slot->ready, 1, __ATOMIC_RELEASE);
    zsock_destroy (&push);
    zsock_destroy (&fetch);
    free (half_base);
    free (theta);
    return NULL;
}

static uint64_t
s_total_steps (s_client_t *cs, int n)
{
    uint64_t sum = 0;
    for (int i = 0; i < n; i++)
        sum += __atomic_load_n (&cs [i].slot->steps, __ATOMIC_RELAXED);
    return sum;
}

static const char *
s_first_error (s_client_t *cs, int n)
{
    for (int i = 0; i < n; i++)
        if (cs [i].slot->error [0])
            return cs [i].slot->error;
    return NULL;
}

/*  Runs `clients` clients against the server; rates [r] gets the steps/s
    of round r, srv_cpu [r] and cli_cpu [r] the CPU seconds a step cost the
    server and the clients (this process) (negative when unknown). 0, or -1
    after saying why.  */
static int s_copy = 1;
/*  Clients as processes of their own (each with its own ZeroMQ context
    and I/O thread, as ps-lite's workers are), else threads of this one
    sharing one I/O thread; -1: processes when ps-lite is measured.  */
static int s_procs = -1;
static int s_keep_heap = 1;

/*  The CPU seconds of n processes together; -1 when one cannot be read.  */
static double
s_pids_cpu (const pid_t *pids, int n)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        double c = fasgd_procs_cpu (pids [i]);
        if (c < 0)
            return -1;
        sum += c;
    }
    return sum;
}

/*  The gradient every client sends: small, finite and not all equal.  */
static void
s_grad_fill (float *grad, size_t n)
{
    for (size_t k = 0; k < n; k++)
        grad [k] = 1e-3f * (1.0f + (float) (k % 7) / 7.0f);
}

/*  A client process: bench-net --client-proc FD IDX PUSH FETCH KEY N WIRE
    ONE COPY KEEP OFFSET, where FD holds the slots it shares with main (IDX
    its own) and KEY is "-" without CURVE.  */
static int
s_client_proc (char **argv)
{
    int fd = atoi (argv [2]), idx = atoi (argv [3]);
    size_t n = (size_t) strtoull (argv [7], NULL, 10);
    size_t len = (size_t) (idx + 1) * sizeof (s_slot_t);
    s_slot_t *slots = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    s_grad_offset = atol (argv [12]);
    void *base;
    float *grad = s_page_alloc (n * sizeof (float), &base);
    if (slots == MAP_FAILED || !grad) {
        fprintf (stderr, "bench-net: a client process cannot start: %s\n", strerror (errno));
        return 1;
    }
    if (atoi (argv [11]))
        fasgd_heap_keep_large_blocks ();
    s_grad_fill (grad, n);
    s_client_t c = { .push_ep = argv [4], .fetch_ep = argv [5], .server_key = strcmp (argv [6], "-") ? argv [6] : "",
                     .n = n, .grad = grad, .wire = atoi (argv [8]), .one_trip = atoi (argv [9]),
                     .copy = atoi (argv [10]), .slot = slots + idx };
    s_client_main (&c);
    zsys_shutdown ();
    free (base);
    return 0;
}

/*  Starts client i as a process of its own (this program again, with
    --client-proc). 0, or -1.  */
static int
s_client_spawn (const s_client_t *c, int fd, int i, pid_t *pid)
{
    char a_fd [16], a_i [16], a_n [32], a_w [16], a_o [16], a_c [16], a_k [16], a_g [32];
    snprintf (a_fd, sizeof a_fd, "%d", fd);
    snprintf (a_i, sizeof a_i, "%d", i);
    snprintf (a_n, sizeof a_n, "%zu", c->n);
    snprintf (a_w, sizeof a_w, "%d", c->wire);
    snprintf (a_o, sizeof a_o, "%d", c->one_trip);
    snprintf (a_c, sizeof a_c, "%d", c->copy);
    snprintf (a_k, sizeof a_k, "%d", s_keep_heap);
    snprintf (a_g, sizeof a_g, "%ld", s_grad_offset);
    char *args [] = { "bench-net", "--client-proc", a_fd, a_i, (char *) c->push_ep, (char *) c->fetch_ep,
                      *c->server_key ? (char *) c->server_key : "-", a_n, a_w, a_o, a_c, a_k, a_g, NULL };
    fflush (NULL);
    *pid = fork ();
    if (*pid < 0)
        return -1;
    if (*pid == 0) {
        /*  Only async-signal-safe calls between fork and exec.  */
#ifdef __linux__
        prctl (PR_SET_PDEATHSIG, SIGTERM);
#endif
        execv ("/proc/self/exe", args);
        _exit (127);
    }
    return 0;
}

/*  Runs `clients` clients against the server (threads of this process,
    or processes with s_procs); rates [r] gets the steps/s of round r,
    srv_cpu [r] and cli_cpu [r] the CPU seconds a step cost the server and
    the clients (this process, or the client processes) (negative when
    unknown). 0, or -1 after saying why.  */
static int
s_measure (const s_server_t *srv, size_t n, const float *grad, int one_trip, int clients, double warmup,
           double seconds, int rounds, double *rates, double *srv_cpu, double *cli_cpu)
{
    s_client_t *cs = calloc ((size_t) clients, sizeof *cs);
    size_t len = (size_t) clients * sizeof (s_slot_t);
    int fd = s_procs > 0 ? memfd_create ("bench-net-slots", 0) : -1;
    s_slot_t *slots = MAP_FAILED;
    if (s_procs <= 0)
        slots = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    else if (fd >= 0 && ftruncate (fd, (off_t) len) == 0)
        slots = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int rc = 0, started = 0;
    pid_t pids [S_MAX_CLIENTS];
    if (!cs || slots == MAP_FAILED) {
        fprintf (stderr, "bench-net: memory for the clients: %s\n", strerror (errno));
        free (cs);
        if (fd >= 0)
            close (fd);
        return -1;
    }
    for (int i = 0; i < clients; i++) {
        cs [i] = (s_client_t) { .push_ep = srv->push, .fetch_ep = srv->fetch, .server_key = srv->server_key,
                                .n = n, .grad = grad, .wire = srv->wire, .one_trip = one_trip, .copy = s_copy,
                                .slot = slots + i };
        if (s_procs > 0 ? s_client_spawn (&cs [i], fd, i, &pids [i]) != 0
                        : pthread_create (&cs [i].tid, NULL, s_client_main, &cs [i]) != 0) {
            fprintf (stderr, "bench-net: cannot start client %d\n", i);
            rc = -1;
            break;
        }
        if (s_procs > 0)
            s_client_pids [i] = pids [i];
        started++;
    }
    /*  The CPU of the clients: this process's, or the sum of theirs.  */
#define S_CLIENTS_CPU() (s_procs > 0 ? s_pids_cpu (pids, started) : fasgd_procs_cpu (getpid ()))
    /*  Warm-up: every client joined and through one step, and at least
        `warmup` seconds of traffic; bounded by the clients' reply
        timeout.  */
    double t0 = fasgd_bench_now ();
    for (int busy = rc == 0; busy; ) {
        busy = 0;
        for (int i = 0; i < started; i++)
            busy |= !__atomic_load_n (&slots [i].ready, __ATOMIC_ACQUIRE)
                    || (!slots [i].error [0] && __atomic_load_n (&slots [i].steps, __ATOMIC_RELAXED) == 0);
        busy |= fasgd_bench_now () - t0 < warmup;
        if (s_first_error (cs, started))
            busy = 0;
        if (fasgd_bench_now () - t0 > warmup + 2e-3 * S_REPLY_TIMEOUT_MS) {
            snprintf (slots [0].error, sizeof slots [0].error, "the clients did not start within %g s",
                      warmup + 2e-3 * S_REPLY_TIMEOUT_MS);
            busy = 0;
        }
        if (busy)
            usleep (10000);
    }
    const char *err = s_first_error (cs, started);
    for (int r = 0; rc == 0 && !err && r < rounds; r++) {
        uint64_t s0 = s_total_steps (cs, started);
        double a = fasgd_bench_now (), v0 = fasgd_procs_cpu (srv->pid), c0 = S_CLIENTS_CPU ();
        usleep ((useconds_t) (seconds * 1e6));
        uint64_t s1 = s_total_steps (cs, started);
        double v1 = fasgd_procs_cpu (srv->pid), c1 = S_CLIENTS_CPU ();
        rates [r] = (double) (s1 - s0) / (fasgd_bench_now () - a);
        srv_cpu [r] = v0 >= 0 && v1 >= 0 && s1 > s0 ? (v1 - v0) / (double) (s1 - s0) : -1;
        cli_cpu [r] = c0 >= 0 && c1 >= 0 && s1 > s0 ? (c1 - c0) / (double) (s1 - s0) : -1;
        err = s_first_error (cs, started);
    }
#undef S_CLIENTS_CPU
    for (int i = 0; i < clients; i++)
        __atomic_store_n (&slots [i].stop, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < started; i++) {
        if (s_procs <= 0) {
            pthread_join (cs [i].tid, NULL);
            continue;
        }
        /*  A client leaves within one step and its reply timeout; past
            that it is stopped.  */
        int st;
        double t = fasgd_bench_now ();
        while (waitpid (pids [i], &st, WNOHANG) == 0) {
            if (fasgd_bench_now () - t > 1e-3 * S_REPLY_TIMEOUT_MS + 5) {
                kill (pids [i], SIGKILL);
                waitpid (pids [i], &st, 0);
                break;
            }
            usleep (10000);
        }
        s_client_pids [i] = 0;
    }
    if (!err)
        err = s_first_error (cs, started);
    if (err) {
        fprintf (stderr, "bench-net: a client gave up: %s\n", err);
        rc = -1;
    }
    munmap (slots, len);
    if (fd >= 0)
        close (fd);
    free (cs);
    return rc;
}

/* ------------------------------------------------------------------ */
/*  What the machine moves without fasgd                                */

/*  memcpy of `bytes` between two warm buffers, in bytes per second.  */
static double
s_memcpy_rate (size_t bytes, double seconds)
{
    char *a = malloc (bytes), *b = malloc (bytes);
    if (!a || !b) {
        free (a);
        free (b);
        return 0;
    }
    memset (a, 1, bytes);
    memset (b, 2, bytes);
    memcpy (b, a, bytes);
    volatile char sink = 0;
    long reps = 0;
    double t0 = fasgd_bench_now (), t;
    do {
        /*  Back and forth, and a byte read back, so no copy is dead.  */
        for (int k = 0; k < 8; k++, reps++) {
            if (reps % 2)
                memcpy (a, b, bytes);
            else
                memcpy (b, a, bytes);
            sink += (reps % 2 ? a : b) [reps % bytes];
        }
        t = fasgd_bench_now () - t0;
    } while (t < seconds);
    (void) sink;
    free (a);
    free (b);
    return (double) reps * (double) bytes / t;
}

typedef struct {
    int fd;
    char *buf;
} s_writer_t;

static void *
s_tcp_writer (void *arg)
{
    s_writer_t *w = arg;
    for (;;) {
        ssize_t k = send (w->fd, w->buf, S_TCP_CHUNK, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;                      /* the reader has closed its end */
    }
    return NULL;
}

/*  One TCP connection over 127.0.0.1, one thread writing and this one
    reading, with the kernel's default buffer sizes (as ZeroMQ leaves
    them): bytes per second, or 0 when the sockets cannot be made.  */
static double
s_tcp_rate (double seconds)
{
    int ls = socket (AF_INET, SOCK_STREAM, 0), wr = -1, rd = -1;
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0 };
    addr.sin_addr.s_addr = htonl (INADDR_LOOPBACK);
    socklen_t alen = sizeof addr;
    double rate = 0;
    char *wbuf = malloc (S_TCP_CHUNK), *rbuf = malloc (S_TCP_CHUNK);
    if (ls < 0 || !wbuf || !rbuf || bind (ls, (struct sockaddr *) &addr, sizeof addr) != 0
        || listen (ls, 1) != 0 || getsockname (ls, (struct sockaddr *) &addr, &alen) != 0
        || (wr = socket (AF_INET, SOCK_STREAM, 0)) < 0
        || connect (wr, (struct sockaddr *) &addr, sizeof addr) != 0 || (rd = accept (ls, NULL, NULL)) < 0) {
        fprintf (stderr, "bench-net: loopback TCP: %s\n", strerror (errno));
        goto done;
    }
    memset (wbuf, 3, S_TCP_CHUNK);
    memset (rbuf, 0, S_TCP_CHUNK);
    s_writer_t w = { .fd = wr, .buf = wbuf };
    pthread_t tid;
    if (pthread_create (&tid, NULL, s_tcp_writer, &w) != 0)
        goto done;
    /*  A quarter of the time to warm up (slow start, buffers), the rest
        counted.  */
    double t0 = fasgd_bench_now (), a = 0, t = 0;
    uint64_t got = 0;
    for (;;) {
        ssize_t k = recv (rd, rbuf, S_TCP_CHUNK, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        t = fasgd_bench_now () - t0;
        if (a == 0 && t >= 0.25 * seconds) {
            a = t;
            got = 0;
        }
        else
            got += (uint64_t) k;
        /*  At least a quarter of the time counted, even when a loaded
            machine let a read sleep through the rest; at most 10 times
            the time in all.  */
        if ((t >= 1.25 * seconds && a > 0 && t - a >= 0.25 * seconds) || t >= 10 * seconds)
            break;
    }
    close (rd);
    rd = -1;
    pthread_join (tid, NULL);
    if (t > a && a > 0)
        rate = (double) got / (t - a);
done:
    if (rd >= 0)
        close (rd);
    if (wr >= 0)
        close (wr);
    if (ls >= 0)
        close (ls);
    free (wbuf);
    free (rbuf);
    return rate;
}

/* ------------------------------------------------------------------ */
/*  One row of the table                                                */

/*  The loopback TCP sample taken before each round lasts this long.  */
#define S_TCP_SAMPLE_S 0.4

typedef struct {
    double rate [S_MAX_ROUNDS], scpu [S_MAX_ROUNDS], ccpu [S_MAX_ROUNDS];
    double tcp [S_MAX_ROUNDS];                  /* one loopback TCP connection, bytes/s */
    int paired;                                 /* a ps-lite round beside every round */
    fasgd_pslite_result_t peer [S_MAX_ROUNDS];
} s_row_t;

/*  One round of one row: new clients that warm up and count steps over
    one interval; with pslite (its harness's directory), a ps-lite round
    of the same D, clients and seconds beside it, before it in odd rounds
    and after it in even ones, so that a drift in the machine's load falls
    on both alike. 0, or -1 after saying why.  */
static int
s_round (const s_server_t *srv, size_t n, const float *grad, int one_trip, int clients, double warmup,
         double seconds, int r, const char *pslite, int keep_heap, s_row_t *row)
{
    row->paired = pslite != NULL;
    for (int side = 0; side < 2; side++) {
        char err [768];
        if ((side == r % 2) && s_measure (srv, n, grad, one_trip, clients, warmup, seconds, 1, row->rate + r,
                                          row->scpu + r, row->ccpu + r) != 0)
            return -1;
        if ((side != r % 2) && pslite
            && fasgd_pslite_run (pslite, n, clients, seconds, warmup, keep_heap, row->peer + r, err, sizeof err)
                   != 0) {
            fprintf (stderr, "bench-net: ps-lite: %s\n", err);
            return -1;
        }
    }
    return 0;
}

/*  The ps-lite rounds of a paired row, as a row of the table of their
    own (rule "ps-lite").  */
static void
s_print_peer (const s_row_t *row, size_t n, int clients, int rounds)
{
    double rate [S_MAX_ROUNDS], scpu [S_MAX_ROUNDS], ccpu [S_MAX_ROUNDS], tcp [S_MAX_ROUNDS], lo, hi, tlo, thi;
    int ns = 0, nc = 0;
    for (int r = 0; r < rounds; r++) {
        rate [r] = row->peer [r].rate;
        tcp [r] = row->tcp [r];
        if (row->peer [r].srv_cpu >= 0)
            scpu [ns++] = row->peer [r].srv_cpu;
        if (row->peer [r].cli_cpu >= 0)
            ccpu [nc++] = row->peer [r].cli_cpu;
    }
    double m = fasgd_bench_median_range (rate, rounds, &lo, &hi);
    double t = fasgd_bench_median_range (tcp, rounds, &tlo, &thi);
    (void) t;
    char sbuf [16] = "-", cbuf [16] = "-", tbuf [32];
    if (ns)
        snprintf (sbuf, sizeof sbuf, "%.3f", 1e3 * fasgd_bench_median (scpu, ns));
    if (nc)
        snprintf (cbuf, sizeof cbuf, "%.3f", 1e3 * fasgd_bench_median (ccpu, nc));
    snprintf (tbuf, sizeof tbuf, "%.1f-%.1f", tlo / (8.0 * (double) n), thi / (8.0 * (double) n));
    printf ("%-9zu %-10s %5d %7d %10.1f %6.0f%% %6.2f %8s %8s %13s %8s %16s %16s %16s %5s\n", n, "ps-lite", 2, clients,
            m, m > 0 ? 100.0 * (hi - lo) / m : 0.0, 8.0 * (double) n * m / 1e9, sbuf, cbuf, tbuf, "check=ok", "-",
            "-", "-", "-");
}

/*  A row's rate beside another's, paired by round: the median of the
    per-round ratios and their least and greatest; x 0 if there is none.  */
typedef struct {
    double x, lo, hi;
} s_ratio_t;

/*  The ratio of rate to ref, round r of one beside round r of the other.  */
static s_ratio_t
s_paired_ratio (const double *rate, const double *ref, int rounds)
{
    double x [S_MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        x [r] = rate [r] / ref [r];
    s_ratio_t q;
    q.x = fasgd_bench_median_range (x, rounds, &q.lo, &q.hi);
    return q;
}

/* ------------------------------------------------------------------ */
/*  Command line                                                        */

static double
s_seconds_arg (const char *name, const char *text, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod (text, &end);
    if (end == text || *end || errno == ERANGE || !(v >= lo && v <= hi)) {
        fprintf (stderr, "bench-net: %s must be a number of seconds in %g..%g (got '%s')\n", name, lo, hi,
                 text);
        exit (2);
    }
    return v;
}

/*  Splits a comma-separated list into items of at most 63 characters.  */
static int
s_split (const char *name, const char *text, char items [][64], int max)
{
    int n = 0;
    const char *p = text;
    for (;;) {
        const char *e = strchr (p, ',');
        size_t len = e ? (size_t) (e - p) : strlen (p);
        if (len == 0 || len > 63 || n == max) {
            fprintf (stderr, "bench-net: %s: at most %d non-empty items (got '%s')\n", name, max, text);
            exit (2);
        }
        memcpy (items [n], p, len);
        items [n++][len] = 0;
        if (!e)
            return n;
        p = e + 1;
    }
}

static void
s_usage (FILE *out)
{
    fputs ("usage: bench-net [--server PATH] [--sizes LIST] [--rules LIST] [--clients LIST]\n"
           "                 [--trips LIST] [--seconds S] [--warmup S] [--rounds R]\n"
           "                 [--fresh-pages] [--server-cpu N] [--client-cpu N] [--pslite DIR]\n"
           "                 [--no-copy] [--client-procs | --client-threads] [--grad-offset B]\n"
           "Push→fetch steps/s through fasgd-server on 127.0.0.1, side by side with ps-lite.\n"
           "  --server PATH    the daemon (default $FASGD_TOP_BUILDDIR/server/fasgd-server,\n"
           "                   else ../server/fasgd-server next to this program, else\n"
           "                   build/server/fasgd-server)\n"
           "  --sizes LIST     80k, 1m, 10m (D = 79,510, 1,000,900, 10,099,900) or layer\n"
           "                   widths such as 784-100-10; default 80k,1m,10m\n"
           "  --rules LIST     server rules (rule.name), and bare: the reference server (the\n"
           "                   same sockets and messages, only theta -= lr*g behind them);\n"
           "                   default bare,asgd,fasgd; RULE+curve (e.g. asgd+curve): the\n"
           "                   same with CURVE on, its vs-asgd the price of encryption;\n"
           "                   RULE+bf16, RULE+f16: the compact wire both ways, the\n"
           "                   clients rounding each push and widening each reply\n"
           "                   RULE+noguard: the same with the push guard off\n"
           "  --clients LIST   concurrent clients; default 1,4,16\n"
           "  --trips LIST     round trips a step: 2 (PUSH then FETCH, as ps-lite's push\n"
           "                   then pull) and 1 (PUSH with THEN_FETCH); default 2,1\n"
           "  --seconds S      length of one measured interval; default 3\n"
           "  --warmup S       traffic before the first interval; default 1\n"
           "  --rounds R       measured intervals per figure (the median is printed); default 3\n"
           "  --fresh-pages    leave glibc's malloc as it is: every large reply is a fresh\n"
           "                   mapping faulted in page by page (by default the clients keep\n"
           "                   large blocks in the heap, as fasgd-client does)\n"
           "  --server-cpu N   pin the server to CPU N (fasgd-server's cpu key; the bare\n"
           "                   server likewise); default: not pinned\n"
           "  --client-cpu N   pin the clients (their threads and ZeroMQ's) to CPU N;\n"
           "                   default: not pinned\n"
           "  --pslite DIR     ps-lite's harness (DIR/run.sh D W S prints its steps/s; build\n"
           "                   it with DIR/build.sh): each round of the asgd rows of two trips\n"
           "                   is followed by a ps-lite round of the same D, clients and\n"
           "                   seconds; default $FASGD_PSLITE, else ps-lite is not measured\n"
           "  --no-copy        the clients drop each reply uncopied (by default they copy\n"
           "                   theta into their own buffer, as fasgd-client and ps-lite do)\n"
           "  --client-procs   each client a process of its own, as ps-lite's workers are\n"
           "                   (the default with --pslite)\n"
           "  --client-threads the clients threads of this process sharing one ZeroMQ I/O\n"
           "                   thread (the default without --pslite)\n"
           "  --grad-offset B  the gradient the clients send starts B bytes past a page's\n"
           "                   start, a multiple of 4 below 4096; default 0 (malloc puts a\n"
           "                   large block 16 bytes past, where the kernel's copy of a send\n"
           "                   can be slower)\n",
           out);
}

/*  What the command line asks.  */
typedef struct {
    char exe [1024];                            /* the daemon */
    s_size_t sizes [S_MAX_SIZES];
    char rules [S_MAX_RULES][64];
    int counts [S_MAX_COUNTS];
    int nsizes, nrules, ncounts;
    int trips [2], ntrips;
    double seconds, warmup;
    long rounds;
    int fresh_pages, client_cpu;
    const char *pslite;                         /* ps-lite's harness, or NULL */
} s_args_t;

/*  One option into a: -1 to go on, else the exit status (the list
    arguments, checked as they are split, exit by themselves).  */
static int
s_option (s_args_t *a, int opt, const char **size_list)
{
    switch (opt) {
        case 'S': snprintf (a->exe, sizeof a->exe, "%s", optarg); break;
        case 'z': *size_list = optarg; break;
        case 'u': a->nrules = s_split ("--rules", optarg, a->rules, S_MAX_RULES); break;
        case 'l': {
            char c [S_MAX_COUNTS][64];
            a->ncounts = s_split ("--clients", optarg, c, S_MAX_COUNTS);
            for (int i = 0; i < a->ncounts; i++)
                a->counts [i] = (int) fasgd_bench_int_arg ("bench-net", "--clients", c [i], 1, S_MAX_CLIENTS);
            break;
        }
        case 't': {
            char t [2][64];
            a->ntrips = s_split ("--trips", optarg, t, 2);
            for (int i = 0; i < a->ntrips; i++)
                a->trips [i] = (int) fasgd_bench_int_arg ("bench-net", "--trips", t [i], 1, 2);
            break;
        }
        case 's': a->seconds = s_seconds_arg ("--seconds", optarg, 0.1, 3600); break;
        case 'w': a->warmup = s_seconds_arg ("--warmup", optarg, 0, 3600); break;
        case 'r': a->rounds = fasgd_bench_int_arg ("bench-net", "--rounds", optarg, 1, S_MAX_ROUNDS); break;
        case 'F': a->fresh_pages = 1; break;
        case 'P': s_server_cpu = (int) fasgd_bench_int_arg ("bench-net", "--server-cpu", optarg, 0, FASGD_CPU_MAX); break;
        case 'C': a->client_cpu = (int) fasgd_bench_int_arg ("bench-net", "--client-cpu", optarg, 0, FASGD_CPU_MAX); break;
        case 'L': a->pslite = optarg; break;
        case 'N': s_copy = 0; break;
        case 'p': s_procs = 1; break;
        case 'T': s_procs = 0; break;
        case 'G':
            s_grad_offset = fasgd_bench_int_arg ("bench-net", "--grad-offset", optarg, 0, S_PAGE - 4);
            if (s_grad_offset % 4) {
                fprintf (stderr, "bench-net: --grad-offset %s is not a multiple of 4 (a float's size)\n", optarg);
                return 2;
            }
            break;
        case 'h': s_usage (stdout); return 0;
        default: s_usage (stderr); return 2;
    }
    return -1;
}

/*  The command line into a: -1 to go on, else the exit status. The
    opening is not fasgd_cli's: a benchmark has no configuration file and
    no --version, and a bad option prints the whole usage on stderr.  */
static int
s_options (s_args_t *a, int argc, char **argv)
{
    static const struct option longopts [] = {
        { "server", required_argument, NULL, 'S' },
        { "sizes", required_argument, NULL, 'z' },
        { "rules", required_argument, NULL, 'u' },
        { "clients", required_argument, NULL, 'l' },
        { "trips", required_argument, NULL, 't' },
        { "seconds", required_argument, NULL, 's' },
        { "warmup", required_argument, NULL, 'w' },
        { "rounds", required_argument, NULL, 'r' },
        { "fresh-pages", no_argument, NULL, 'F' },
        { "server-cpu", required_argument, NULL, 'P' },
        { "client-cpu", required_argument, NULL, 'C' },
        { "pslite", required_argument, NULL, 'L' },
        { "no-copy", no_argument, NULL, 'N' },
        { "client-procs", no_argument, NULL, 'p' },
        { "client-threads", no_argument, NULL, 'T' },
        { "grad-offset", required_argument, NULL, 'G' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 }
    };
    const char *size_list = "80k,1m,10m";
    int opt, status;
    while ((opt = getopt_long (argc, argv, "h", longopts, NULL)) != -1)
        if ((status = s_option (a, opt, &size_list)) >= 0)
            return status;
    if (optind < argc) {
        fprintf (stderr, "bench-net: unexpected argument '%s'\n", argv [optind]);
        return 2;
    }
    for (int u = 0; u < a->nrules; u++)
        if (strncmp (a->rules [u], "bare", 4) == 0 && a->rules [u][4]) {
            fprintf (stderr, "bench-net: --rules: '%s': the bare server takes no options\n", a->rules [u]);
            return 2;
        }
    char items [S_MAX_SIZES][64];
    a->nsizes = s_split ("--sizes", size_list, items, S_MAX_SIZES);
    for (int i = 0; i < a->nsizes; i++)
        if (s_size_parse (items [i], &a->sizes [i]) != 0) {
            fprintf (stderr, "bench-net: --sizes: '%s' is neither 80k, 1m, 10m nor widths like 784-100-10\n",
                     items [i]);
            return 2;
        }
    return -1;
}

/*  The daemon to measure and ps-lite's harness, both checked: -1 to go
    on, else the exit status after saying why.  */
static int
s_find_programs (s_args_t *a, const char *argv0)
{
    if (!*a->exe) {
        /*  The build tree's daemon: named by the environment (as in the
            tests), else next to this program (BUILDDIR/bench/bench-net),
            else under build/ (scripts/build's default).  */
        const char *top = getenv ("FASGD_TOP_BUILDDIR");
        const char *slash = strrchr (argv0, '/');
        if (top)
            snprintf (a->exe, sizeof a->exe, "%s/server/fasgd-server", top);
        else if (slash)
            snprintf (a->exe, sizeof a->exe, "%.*s/../server/fasgd-server", (int) (slash - argv0), argv0);
        if (!*a->exe || access (a->exe, X_OK) != 0)
            snprintf (a->exe, sizeof a->exe, "build/server/fasgd-server");
    }
    if (access (a->exe, X_OK) != 0) {
        fprintf (stderr, "bench-net: %s: %s (build it, or give --server PATH)\n", a->exe, strerror (errno));
        return 1;
    }
    if (a->pslite && !*a->pslite)
        a->pslite = NULL;
    if (a->pslite) {
        char err [512];
        if (fasgd_pslite_check (a->pslite, err, sizeof err) != 0) {
            fprintf (stderr, "bench-net: --pslite: %s\n", err);
            return 2;
        }
    }
    return -1;
}

/*  The process around the benchmark: the heap, the clients' kind, the
    signals, czmq.  */
static void
s_process_setup (const s_args_t *a)
{
    /*  Replies arrive in buffers ZeroMQ mallocs. fasgd-client keeps large
        blocks in the heap so that a 40 MB reply reuses the pages of the
        last one; the clients here do the same unless told otherwise.  */
    if (!a->fresh_pages)
        fasgd_heap_keep_large_blocks ();
    s_keep_heap = !a->fresh_pages;
    if (s_procs < 0)
        s_procs = a->pslite != NULL;

    /*  Ours, not czmq's: a stopped benchmark takes its server with it.  */
    zsys_handler_set (NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
    sigaction (SIGHUP, &sa, NULL);
    sigaction (SIGPIPE, &sa, NULL);         /* stdout piped into head */
    zsys_init ();
}

/*  The header's first lines: the run, the machine, and the figures of
    loopback TCP and memcpy it is measured against.  */
static void
s_print_machine (const s_args_t *a)
{
    double load [3] = { 0, 0, 0 };
    if (getloadavg (load, 3) < 0)
        load [0] = load [1] = load [2] = -1;
    int major, minor, patch;
    zmq_version (&major, &minor, &patch);
    printf ("# bench-net: %s on 127.0.0.1 TCP; %g s intervals after %g s of warm-up, %ld rounds (medians)\n",
            a->exe, a->seconds, a->warmup, a->rounds);
    printf ("# clients' large buffers: %s\n", a->fresh_pages ? "fresh mappings (--fresh-pages)"
                                                            : "kept in the heap, as fasgd-client does");
    printf ("# clients' gradient: %ld bytes past a page's start (--grad-offset)\n", s_grad_offset);
    printf ("# machine: %ld cores, load average %.2f %.2f %.2f at the start; libzmq %d.%d.%d\n",
            sysconf (_SC_NPROCESSORS_ONLN), load [0], load [1], load [2], major, minor, patch);

    printf ("# loopback TCP, one connection, %u MiB writes: sampled for %g s before every round\n",
            S_TCP_CHUNK >> 20, 1.25 * S_TCP_SAMPLE_S);
    for (int i = 0; i < a->nsizes; i++) {
        double m [S_MAX_ROUNDS];
        for (int r = 0; r < a->rounds; r++)
            m [r] = s_memcpy_rate (a->sizes [i].d * sizeof (float), 0.3);
        printf ("# memcpy of 4*D = %zu bytes, warm: %.2f GB/s\n", a->sizes [i].d * sizeof (float),
                fasgd_bench_median (m, (int) a->rounds) / 1e9);
    }
}

/*  --client-cpu: after the TCP and memcpy figures, before the first
    ZeroMQ socket starts the context's I/O thread, which inherits the pin.
    0, or -1 after saying why.  */
static int
s_pin_clients (int cpu)
{
    if (cpu < 0)
        return 0;
    char err [256];
    if (fasgd_affinity_pin (cpu, &s_all_cpus, err, sizeof err) != 0) {
        fprintf (stderr, "bench-net: --client-cpu: %s\n", err);
        return -1;
    }
    zsys_thread_affinity_cpu_add (cpu);
    s_clients_pinned = 1;
    return 0;
}

/*  The header's last lines: where things run, what is measured, what
    each column means, and the columns' names.  */
static void
s_print_legend (const s_args_t *a)
{
    char pin_s [32] = "not pinned", pin_c [32] = "not pinned";
    if (s_server_cpu >= 0)
        snprintf (pin_s, sizeof pin_s, "CPU %d", s_server_cpu);
    if (a->client_cpu >= 0)
        snprintf (pin_c, sizeof pin_c, "CPU %d", a->client_cpu);
    printf ("# server %s, clients %s\n", pin_s, pin_c);
    if (a->pslite)
        printf ("# ps-lite: %s/run.sh, a round beside each round of the asgd rows of 2 trips%s\n", a->pslite,
                a->fresh_pages ? "" : "; large blocks kept in the heap (PSLITE_MALLOC_KEEP=1)");
    else
        printf ("# ps-lite: not measured (--pslite DIR)\n");
    printf ("# clients: %s\n", s_procs ? "processes of their own, as ps-lite's workers (--client-threads: not)"
                                        : "threads of this process, one ZeroMQ I/O thread (--client-procs: not)");
    printf ("# every row: R rounds, each new clients, warm-up, one interval; clients %s\n"
            "# the rules' rows of one trips and clients: their rounds in turn, each rule a server of its own\n"
            "# spread: (max - min) / median over the rounds; GB/s: 2*4*D bytes a step (2*2*D with +bf16, +f16)\n"
            "# srv-ms, cli-ms: CPU milliseconds a step cost the server process and the clients (for ps-lite:\n"
            "#   its server; its workers together, each over its life, warm-up included)\n"
            "# tcp-bound: steps/s if every step's 8*D bytes crossed one connection in turn (min-max of the samples)\n"
            "# x-pslite: median (min-max) of the per-round ratios to the ps-lite round beside it\n"
            "# vs-bare, vs-asgd: the same, to the bare and the asgd rows' round of the same turn\n"
            "# goals: asgd with 2 trips >= %.1fx ps-lite (and, at D >= 1M, >= %.0f%% of tcp-bound);\n"
            "#        fasgd >= %.2fx fasgd-server's own asgd\n",
            s_copy ? "copy each reply into their own theta (--no-copy: not)" : "drop each reply uncopied (--no-copy)",
            S_GOAL_VS_PEER, 100 * S_GOAL_VS_TCP, S_GOAL_VS_ASGD);
    printf ("%-9s %-10s %5s %7s %10s %7s %6s %8s %8s %13s %8s %16s %16s %16s %5s\n", "D", "rule", "trips", "clients",
            "steps/s", "spread", "GB/s", "srv-ms", "cli-ms", "tcp-bound", "ps-lite", "x-pslite", "vs-bare", "vs-asgd",
            "goal");
    fflush (stdout);
}

/*  A row's ratios: to the ps-lite rounds beside it, and to the bare and
    the asgd rows' rounds of the same turns.  */
typedef struct {
    s_ratio_t peer, bare, asgd;
} s_pairs_t;

/*  Prints ratio r as "1.02x(0.95-1.10)" into buf, or "-" if there is none.  */
static void
s_ratio_text (const s_ratio_t *r, char *buf, size_t size)
{
    if (r->x > 0)
        snprintf (buf, size, "%.2fx(%.2f-%.2f)", r->x, r->lo, r->hi);
    else
        snprintf (buf, size, "-");
}

/*  One measured row of the table: rule u, trips t, client count k, with
    its paired ratios (s_print_rows) and whether it meets its goal.  */
static void
s_print_row (const s_args_t *a, const s_server_t *srv, s_row_t *row, size_t n, int u, int t, int k,
             const s_pairs_t *pairs)
{
    int rounds = (int) a->rounds, one = a->trips [t] == 1;
    int is_asgd = strcmp (a->rules [u], "asgd") == 0;
    if (row->paired)
        s_print_peer (row, n, a->counts [k], rounds);
    double lo, hi, tlo, thi;
    double rate = fasgd_bench_median_range (row->rate, rounds, &lo, &hi);
    double srv_ms = 1e3 * fasgd_bench_median (row->scpu, rounds);
    double cli_ms = 1e3 * fasgd_bench_median (row->ccpu, rounds);
    double tcp_bps = fasgd_bench_median_range (row->tcp, rounds, &tlo, &thi);
    char tbuf [32], xbuf [40], vbuf [40], bbuf [40], sbuf [16] = "-", cbuf [16] = "-";
    snprintf (tbuf, sizeof tbuf, "%.1f-%.1f", tlo / (8.0 * (double) n), thi / (8.0 * (double) n));
    s_ratio_text (&pairs->peer, xbuf, sizeof xbuf);
    s_ratio_text (&pairs->bare, bbuf, sizeof bbuf);
    s_ratio_text (&pairs->asgd, vbuf, sizeof vbuf);
    if (srv_ms >= 0)
        snprintf (sbuf, sizeof sbuf, "%.3f", srv_ms);
    if (cli_ms >= 0)
        snprintf (cbuf, sizeof cbuf, "%.3f", cli_ms);
    const char *goal = "-";
    /*  Two trips, as ps-lite's push then pull; and at D >= 1M also 80% of
        what one loopback TCP connection carries.  */
    if (is_asgd && !one && pairs->peer.x > 0)
        goal = pairs->peer.x >= S_GOAL_VS_PEER
                       && (n < S_GOAL_TCP_FROM_D || rate >= S_GOAL_VS_TCP * tcp_bps / (8.0 * (double) n))
                   ? "met" : "MISS";
    /*  A +curve or +bf16 row's ratio is the price of that, with no goal.  */
    if (pairs->asgd.x > 0 && !strchr (a->rules [u], '+'))
        goal = pairs->asgd.x >= S_GOAL_VS_ASGD ? "met" : "MISS";
    printf ("%-9zu %-10s %5d %7d %10.1f %6.0f%% %6.2f %8s %8s %13s %8s %16s %16s %16s %5s\n", n, a->rules [u],
            a->trips [t], a->counts [k], rate, rate > 0 ? 100.0 * (hi - lo) / rate : 0.0,
            2.0 * (srv->wire ? 2.0 : 4.0) * (double) n * rate / 1e9, sbuf, cbuf, tbuf, "-", xbuf, bbuf, vbuf, goal);
    fflush (stdout);
}

/*  The rows of one number of trips (one: 1) and of clients, one a rule,
    measured together: `rounds` rounds, each a loopback TCP sample, then a
    round of every rule's row in turn (s_round), in the order of --rules
    in even rounds and the reverse in odd ones, so that the rows compared
    with each other (vs-bare, vs-asgd) are paired by round as asgd's is
    with ps-lite's. 0, or -1 after saying why.  */
static int
s_rows (const s_args_t *a, const s_server_t *srv, size_t n, const float *grad, int one, int clients, s_row_t *rows)
{
    for (int u = 0; u < a->nrules; u++)
        memset (rows + u, 0, sizeof rows [u]);
    for (int r = 0; r < (int) a->rounds; r++) {
        double tcp = s_tcp_rate (S_TCP_SAMPLE_S);
        for (int j = 0; j < a->nrules; j++) {
            int u = r % 2 ? a->nrules - 1 - j : j;
            int is_asgd = strcmp (a->rules [u], "asgd") == 0;
            rows [u].tcp [r] = tcp;
            if (s_round (srv + u, n, grad, one, clients, a->warmup, a->seconds, r,
                         is_asgd && !one ? a->pslite : NULL, !a->fresh_pages, rows + u) != 0)
                return -1;
        }
    }
    return 0;
}

/*  Prints rows (s_rows) of trips t and client count k: each rule's, with
    its rates beside ps-lite's, the bare and the asgd rows' round by round.  */
static void
s_print_rows (const s_args_t *a, const s_server_t *srv, s_row_t *rows, size_t n, int t, int k)
{
    int ia = -1, ib = -1, rounds = (int) a->rounds;
    for (int u = a->nrules - 1; u >= 0; u--) {
        if (strcmp (a->rules [u], "asgd") == 0)
            ia = u;
        if (strcmp (a->rules [u], "bare") == 0)
            ib = u;
    }
    /*  Every ratio before the first row's median sorts its rates in place.  */
    s_pairs_t pairs [S_MAX_RULES];
    for (int u = 0; u < a->nrules; u++) {
        memset (pairs + u, 0, sizeof pairs [u]);
        int is_bare = strcmp (a->rules [u], "bare") == 0, is_asgd = strcmp (a->rules [u], "asgd") == 0;
        if (rows [u].paired) {
            double peer [S_MAX_ROUNDS];
            for (int r = 0; r < rounds; r++)
                peer [r] = rows [u].peer [r].rate;
            pairs [u].peer = s_paired_ratio (rows [u].rate, peer, rounds);
        }
        if (ib >= 0 && !is_bare)
            pairs [u].bare = s_paired_ratio (rows [u].rate, rows [ib].rate, rounds);
        if (ia >= 0 && !is_bare && !is_asgd)
            pairs [u].asgd = s_paired_ratio (rows [u].rate, rows [ia].rate, rounds);
    }
    for (int u = 0; u < a->nrules; u++)
        s_print_row (a, srv + u, rows + u, n, u, t, k, pairs + u);
}

/*  Every row of size i, each rule with a server of its own, all of them
    running while the rows are measured: 0, or 1 after saying what failed.  */
static int
s_bench_size (const s_args_t *a, int i, const float *grad)
{
    size_t n = a->sizes [i].d;
    static s_server_t srv [S_MAX_RULES];
    static s_row_t rows [S_MAX_RULES];
    int started = 0, status = 0;
    for (; started < a->nrules && status == 0; started++)
        if (s_server_start (srv + started, started, a->exe, &a->sizes [i], a->rules [started]) != 0)
            status = 1;
    if (status)
        started--;
    for (int m = 0; m < a->ntrips * a->ncounts && status == 0; m++) {
        int t = m / a->ncounts, k = m % a->ncounts;
        if (s_rows (a, srv, n, grad, a->trips [t] == 1, a->counts [k], rows) != 0)
            status = 1;
        else
            s_print_rows (a, srv, rows, n, t, k);
    }
    for (int u = 0; u < started; u++)
        if (s_server_stop (srv + u) != 0)
            status = 1;
    return status;
}

/*  Every size in turn, then the load at the end: the exit status.  */
static int
s_bench (const s_args_t *a)
{
    int status = 0;
    for (int i = 0; i < a->nsizes && status == 0; i++) {
        size_t n = a->sizes [i].d;
        void *base;
        float *grad = s_page_alloc (n * sizeof (float), &base);
        if (!grad) {
            fprintf (stderr, "bench-net: out of memory for %zu parameters\n", n);
            return 1;
        }
        s_grad_fill (grad, n);
        status = s_bench_size (a, i, grad);
        free (base);
    }
    double load [3];
    if (getloadavg (load, 3) >= 0)
        printf ("# load average %.2f %.2f %.2f at the end\n", load [0], load [1], load [2]);
    return status;
}

/*  Each step returns -1 to go on, or the exit status it ends with.  */
int
main (int argc, char **argv)
{
    if (argc == 5 && strcmp (argv [1], "--bare-server") == 0)
        return s_bare_server (argv [2], (size_t) strtoull (argv [3], NULL, 10), atoi (argv [4]));
    if (argc == 13 && strcmp (argv [1], "--client-proc") == 0)
        return s_client_proc (argv);
    static s_args_t a = {
        .rules = { "bare", "asgd", "fasgd" }, .nrules = 3,
        .counts = { 1, 4, 16 }, .ncounts = 3,
        .trips = { 2, 1 }, .ntrips = 2,
        .seconds = 3, .warmup = 1, .rounds = 3, .client_cpu = -1,
    };
    a.pslite = getenv ("FASGD_PSLITE");
    int status = s_options (&a, argc, argv);
    if (status < 0)
        status = s_find_programs (&a, argv [0]);
    if (status >= 0)
        return status;
    s_process_setup (&a);
    s_print_machine (&a);
    if (s_pin_clients (a.client_cpu) != 0)
        return 1;
    s_print_legend (&a);
    status = s_bench (&a);
    zsys_shutdown ();
    return status;
}
