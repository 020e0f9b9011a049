/* config.c - the daemon's configuration, driven by one table.
 *
 * Every key is one row of `table` below: section, key, type, place in
 * struct gp_config, default text, bounds and a line of doc. Defaults are
 * parsed by the code that parses file values, so a default cannot disagree
 * with what a user could write; the dump and docs/config.md are printed
 * from the same rows.
 *
 * libinih splits the file into sections and key = value pairs. It reads
 * through our reader, which counts lines (Debian's libinih hands no line
 * number to the handler), rejects control characters, names an unknown
 * section at its header, strips leading blanks (so an indented line is a
 * plain line, never a continuation of the one before) and handles lines
 * longer than libinih's fixed 200-byte buffer itself, with libinih's rules.
 *
 * Paths are kept as given (in the private part) and resolved against
 * state_dir after every change, so `--set server.state_dir=...` moves the
 * socket, store and job folders that were left relative.
 */
#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "daemon/config.h"
#include "gpupool/policies.h"

#define US_MS INT64_C(1000)
#define US_S INT64_C(1000000)
#define US_M (60 * US_S)
#define US_H (3600 * US_S)
#define US_D (86400 * US_S)
#define MIB_G INT64_C(1024)
#define MIB_T (INT64_C(1024) * 1024)

/* the longest value text a message quotes */
#define QUOTE_MAX 60
/* the longest Unix socket path (sun_path less its NUL) */
#define SOCKET_PATH_MAX 107
/* the longest [policy] key */
#define POLICY_KEY_MAX 128

enum type {
    T_STRING,
    T_PATH,
    T_BOOL,
    T_INT,
    T_DURATION,
    T_SIZE,
    T_ENUM,
    T_SIGNAL,
};

static const char *const type_names[] = {
    [T_STRING] = "string", [T_PATH] = "path",         [T_BOOL] = "bool",
    [T_INT] = "integer",   [T_DURATION] = "duration", [T_SIZE] = "size",
    [T_ENUM] = "enum",     [T_SIGNAL] = "signal",
};

#define EMPTY_OK 1u  /* "" is a value: unset */
#define RELOAD 2u    /* a SIGHUP reload applies it */
#define STATE_DIR 4u /* the base of relative paths; "" = the rule */

struct word {
    const char *word;
    int value;
};

struct entry {
    const char *section;
    const char *key;
    const char *name; /* "section.key" */
    enum type type;
    size_t off;
    const char *def; /* parsed like a file's value */
    int64_t min, max;
    /* T_ENUM: its words; T_INT: words allowed besides numbers */
    const struct word *words;
    unsigned flags;
    /* more rules for a T_STRING; GP_OK or an error naming `label` */
    int (*check)(const char *value, const char *where, const char *label,
                 struct gp_diag *diag);
    const char *doc;
    const char *doc_default; /* how the docs show the default, if not def */
    const char *doc_values;  /* how the docs show what is allowed */
};

struct section {
    const char *name;
    const char *doc;
};

static const struct section sections[] = {
    {"server", "The API (HTTP/JSON on a Unix socket, and optionally TCP), "
               "its clients' tokens and the daemon's log."},
    {"store", "The SQLite store (WAL mode) that holds jobs, tenants and "
              "samples."},
    {"scheduler", "The scheduling core: policy, placement, tenants and the "
                  "rules of preemption."},
    {"policy", NULL}, /* any key: see policy_doc */
    {"backend", "Where and how jobs run."},
    {"slurm", "The Slurm backend (backend.kind = slurm): how gpupool "
              "reaches the cluster (docs/slurm.md)."},
    {"monitor", "GPU monitoring."},
    {"metrics", "The Prometheus endpoint."},
};
#define NSECTIONS (sizeof(sections) / sizeof(sections[0]))

static const struct word log_words[] = {
    {"error", GP_LOG_ERROR},
    {"warn", GP_LOG_WARN},
    {"info", GP_LOG_INFO},
    {"debug", GP_LOG_DEBUG},
    {NULL, 0},
};
static const struct word sync_words[] = {
    {"full", GP_CONFIG_SYNC_FULL},
    {"normal", GP_CONFIG_SYNC_NORMAL},
    {NULL, 0},
};
static const struct word place_words[] = {
    {"count", GP_PLACE_COUNT},
    {"pack", GP_PLACE_PACK},
    {"topo", GP_PLACE_TOPO},
    {"consolidate", GP_PLACE_CONSOLIDATE},
    {NULL, 0},
};
static const struct word backend_words[] = {
    {"local", GP_CONFIG_BACKEND_LOCAL},
    {"slurm", GP_CONFIG_BACKEND_SLURM},
    {NULL, 0},
};
static const struct word nvml_words[] = {
    {"auto", GP_CONFIG_NVML_AUTO},
    {"on", GP_CONFIG_NVML_ON},
    {"off", GP_CONFIG_NVML_OFF},
    {NULL, 0},
};
static const struct word gpus_words[] = {
    {"auto", GP_CONFIG_GPUS_AUTO},
    {NULL, 0},
};

/* the enum fields are written through an int */
_Static_assert(sizeof(enum gp_log_level) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gp_place_model) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gp_config_sync) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gp_config_backend) == sizeof(int), "enum size");
_Static_assert(sizeof(enum gp_config_nvml) == sizeof(int), "enum size");

static int check_listen(const char *value, const char *where, const char *label,
                        struct gp_diag *diag);
static int check_policy(const char *value, const char *where, const char *label,
                        struct gp_diag *diag);

#define F(field) offsetof(struct gp_config, field)
#define KEY(s, k) .section = s, .key = k, .name = s "." k

/* The table. Order is the order of the dump and of docs/config.md; a key's
 * section must be in `sections`. */
static const struct entry table[] = {
    /* [server] */
    {KEY("server", "state_dir"), .type = T_PATH, .off = F(server.state_dir),
     .def = "", .flags = STATE_DIR | EMPTY_OK,
     .doc = "where the daemon keeps its state; every relative path of "
            "other keys is taken relative to it; empty = the default rule",
     .doc_default = "`/var/lib/gpupool` for root, else "
                    "`$XDG_STATE_HOME/gpupool` or `~/.local/state/gpupool`"},
    {KEY("server", "socket"), .type = T_PATH, .off = F(server.socket),
     .def = "gpupool.sock",
     .doc = "the Unix socket of the API, the CLI's way in (at most 107 "
            "bytes once resolved)"},
    {KEY("server", "listen"), .type = T_STRING, .off = F(server.listen),
     .def = "", .flags = EMPTY_OK, .check = check_listen,
     .doc = "also serve the API on TCP at this address; empty = no TCP",
     .doc_values = "`host:port`, `[v6addr]:port`, empty"},
    {KEY("server", "tls_cert"), .type = T_PATH, .off = F(server.tls_cert),
     .def = "", .flags = EMPTY_OK, .doc = "PEM certificate (chain) for TCP"},
    {KEY("server", "tls_key"), .type = T_PATH, .off = F(server.tls_key),
     .def = "", .flags = EMPTY_OK, .doc = "PEM private key for TCP"},
    {KEY("server", "tls"), .type = T_BOOL, .off = F(server.tls), .def = "on",
     .doc = "TCP speaks TLS; with it on, `listen` requires `tls_cert` and "
            "`tls_key`; off is refused unless `listen` is a loopback "
            "address"},
    {KEY("server", "tokens_file"), .type = T_PATH, .off = F(server.tokens_file),
     .def = "tokens",
     .doc = "the hashes of the API tokens clients present on TCP "
            "(`gpupool token new`; docs/api.md)"},
    {KEY("server", "log_level"), .type = T_ENUM, .off = F(server.log_level),
     .def = "info", .words = log_words, .doc = "the least severe level logged"},
    {KEY("server", "log_file"), .type = T_PATH, .off = F(server.log_file),
     .def = "", .flags = EMPTY_OK,
     .doc = "where the log goes (logfmt, one event a line); empty = stderr"},
    {KEY("server", "max_body"), .type = T_SIZE, .off = F(server.max_body_mib),
     .def = "1M", .min = 1, .max = MIB_G,
     .doc = "the largest HTTP request body accepted"},

    /* [store] */
    {KEY("store", "db"), .type = T_PATH, .off = F(store.db),
     .def = "gpupool.db", .doc = "the SQLite database"},
    {KEY("store", "synchronous"), .type = T_ENUM, .off = F(store.synchronous),
     .def = "full", .words = sync_words,
     .doc = "full: every commit reaches the disk before the client is "
            "answered; normal: a power loss may undo the last commits (a "
            "crash of the daemon never does)"},
    {KEY("store", "retention"), .type = T_DURATION,
     .off = F(store.retention_us), .def = "30d", .min = 0, .max = 3650 * US_D,
     .doc = "how long finished jobs are kept; 0 = keep all history"},
    {KEY("store", "sample_retention"), .type = T_DURATION,
     .off = F(store.sample_retention_us), .def = "7d", .min = 0,
     .max = 3650 * US_D,
     .doc = "how long monitoring samples are kept; 0 = keep them all"},

    /* [scheduler] */
    {KEY("scheduler", "policy"), .type = T_STRING, .off = F(scheduler.policy),
     .def = "pool", .check = check_policy,
     .doc = "the scheduling policy (`gpupool policies` describes them); "
            "its options go in [policy]"},
    {KEY("scheduler", "placement"), .type = T_ENUM,
     .off = F(scheduler.placement), .def = "pack", .words = place_words,
     .doc = "the placement model (docs/cluster.md)"},
    {KEY("scheduler", "tenants"), .type = T_PATH, .off = F(scheduler.tenants),
     .def = "", .flags = EMPTY_OK | RELOAD,
     .doc = "the tenants file (docs/tenants.md); empty = one tenant, "
            "`default`; SIGHUP reloads it"},
    {KEY("scheduler", "round_period"), .type = T_DURATION,
     .off = F(scheduler.round_period_us), .def = "0", .min = 0, .max = US_D,
     .doc = "a scheduling round at least this often; 0 = rounds on events "
            "only"},
    {KEY("scheduler", "grace"), .type = T_DURATION,
     .off = F(scheduler.grace_us), .def = "60s", .min = 0, .max = 7 * US_D,
     .doc = "how long a preempted job may take to checkpoint and stop once "
            "signalled; 0 = preemption stops it at once"},
    {KEY("scheduler", "min_run"), .type = T_DURATION,
     .off = F(scheduler.min_run_us), .def = "0", .min = 0, .max = 30 * US_D,
     .doc = "a job is not preempted before it has run this long"},
    {KEY("scheduler", "max_preemptions"), .type = T_INT,
     .off = F(scheduler.max_preemptions), .def = "0", .min = 0, .max = 1000000,
     .doc = "the most times one job may be preempted; 0 = no cap"},
    {KEY("scheduler", "usage_half_life"), .type = T_DURATION,
     .off = F(scheduler.usage_half_life_us), .def = "24h", .min = US_S,
     .max = 3650 * US_D, .doc = "the half-life of past usage in fair shares"},
    {KEY("scheduler", "restart_cost"), .type = T_DURATION,
     .off = F(scheduler.restart_cost_us), .def = "0", .min = 0, .max = US_D,
     .doc = "the time a job is taken to lose each time it resumes"},

    /* [backend] */
    {KEY("backend", "kind"), .type = T_ENUM, .off = F(backend.kind),
     .def = "local", .words = backend_words,
     .doc = "local: jobs run as processes on this machine; slurm: on a "
            "Slurm cluster"},
    {KEY("backend", "gpus"), .type = T_INT, .off = F(backend.gpus),
     .def = "auto", .min = 0, .max = 4096, .words = gpus_words,
     .doc = "auto: every GPU NVML sees; a number: that many fake GPUs, for "
            "a machine without any"},
    {KEY("backend", "gpu_type"), .type = T_STRING, .off = F(backend.gpu_type),
     .def = "", .flags = EMPTY_OK,
     .doc = "the GPU type jobs ask for; empty = the name NVML reports, "
            "`fake` for fake GPUs"},
    {KEY("backend", "cpus"), .type = T_INT, .off = F(backend.cpus), .def = "0",
     .min = 0, .max = 1048576, .doc = "CPUs jobs may use; 0 = this machine's"},
    {KEY("backend", "mem"), .type = T_SIZE, .off = F(backend.mem_mib),
     .def = "0", .min = 0, .max = 64 * MIB_T,
     .doc = "memory jobs may use; 0 = this machine's"},
    {KEY("backend", "job_dir"), .type = T_PATH, .off = F(backend.job_dir),
     .def = "jobs",
     .doc = "where each job gets its folder (output, exit status)"},
    {KEY("backend", "preempt_signal"), .type = T_SIGNAL,
     .off = F(backend.preempt_signal), .def = "SIGUSR1",
     .doc = "the signal that asks a job to checkpoint and stop"},
    {KEY("backend", "kill_after"), .type = T_DURATION,
     .off = F(backend.kill_after_us), .def = "10s", .min = 0, .max = US_H,
     .doc = "how long a job has between SIGTERM and SIGKILL"},
    {KEY("backend", "run_as_submitter"), .type = T_BOOL,
     .off = F(backend.run_as_submitter), .def = "yes",
     .doc = "when the daemon runs as root, each job runs as the user who "
            "submitted it (never as root for a non-root submitter); no = "
            "as the daemon's user"},

    /* [slurm] */
    {KEY("slurm", "bin_dir"), .type = T_STRING, .off = F(slurm.bin_dir),
     .def = "", .flags = EMPTY_OK,
     .doc = "the directory of sbatch, squeue, scontrol, ...; empty = "
            "looked up in PATH"},
    {KEY("slurm", "partition"), .type = T_STRING, .off = F(slurm.partition),
     .def = "", .flags = EMPTY_OK,
     .doc = "the partition gpupool's jobs go to and whose held jobs it "
            "adopts; empty = the cluster's default, adopting from every "
            "partition"},
    {KEY("slurm", "poll"), .type = T_DURATION, .off = F(slurm.poll_us),
     .def = "1s", .min = 100 * US_MS, .max = 10 * 60 * US_S,
     .doc = "how often Slurm's nodes and jobs are read (sinfo, squeue): a "
            "node event or a job's end is seen within this"},
    {KEY("slurm", "busy_poll"), .type = T_DURATION,
     .off = F(slurm.busy_poll_us), .def = "200ms", .min = 50 * US_MS,
     .max = 10 * 60 * US_S,
     .doc = "how often Slurm's jobs are read while gpupool waits on Slurm: "
            "a placed job not yet RUNNING, or a stop asked of a job still "
            "there; it bounds how soon a start is confirmed and its GPUs "
            "charged, and so short jobs' throughput (at most slurm.poll)"},
    {KEY("slurm", "timeout"), .type = T_DURATION, .off = F(slurm.timeout_us),
     .def = "10s", .min = 100 * US_MS, .max = 10 * 60 * US_S,
     .doc = "how long one Slurm command may take before it counts as "
            "failed"},
    {KEY("slurm", "adopt"), .type = T_BOOL, .off = F(slurm.adopt), .def = "yes",
     .doc = "jobs users submit with sbatch, held by gpupool's job_submit "
            "plugin, become gpupool jobs (tenant = their Slurm account)"},

    /* [monitor] */
    {KEY("monitor", "period"), .type = T_DURATION, .off = F(monitor.period_us),
     .def = "10s", .min = 100 * US_MS, .max = US_H,
     .doc = "how often GPUs are sampled"},
    {KEY("monitor", "nvml"), .type = T_ENUM, .off = F(monitor.nvml),
     .def = "auto", .words = nvml_words,
     .doc = "auto: NVML when libnvidia-ml.so.1 loads; on: the daemon does "
            "not start without it; off: never"},
    {KEY("monitor", "idle_after"), .type = T_DURATION,
     .off = F(monitor.idle_after_us), .def = "30m", .min = 0, .max = 7 * US_D,
     .doc = "a running job whose GPUs all stay at or below idle_util for "
            "this long is reported idle (log, event, API, metric, and to "
            "the policy: the pool lends its GPUs with [policy] lend_idle = "
            "1); 0 = never"},
    {KEY("monitor", "idle_util"), .type = T_INT,
     .off = F(monitor.idle_util_pct), .def = "5", .min = 0, .max = 100,
     .doc = "utilization (percent) at or below which a GPU counts as idle"},
    {KEY("monitor", "fake_busy"), .type = T_BOOL, .off = F(monitor.fake_busy),
     .def = "yes",
     .doc = "fake GPUs report 100% utilization while a job holds them (no: "
            "0%, as a job that leaves its GPUs idle would)"},

    /* [metrics] */
    {KEY("metrics", "enabled"), .type = T_BOOL, .off = F(metrics.enabled),
     .def = "yes", .doc = "serve /metrics in Prometheus text format"},
};
#define NENTRIES (sizeof(table) / sizeof(table[0]))

struct gp_config__priv {
    char *file;            /* the file loaded; "" for none */
    int line[NENTRIES];    /* where each value came from: its line in
                              file, 0 = the default, -1 = --set */
    char *given[NENTRIES]; /* T_PATH: the text as given */
};

/* ---- small helpers ------------------------------------------------------ */

/* free a string the config owns behind a const pointer (struct gp_kv) */
static void free_const(const char *s)
{
    free((void *)(uintptr_t)s);
}

static char *sdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

/* s, cut to QUOTE_MAX bytes with "..." where longer, for messages */
static const char *quote(char out[QUOTE_MAX + 4], const char *s)
{
    size_t n = strlen(s);

    if (n <= QUOTE_MAX)
        return s;
    memcpy(out, s, QUOTE_MAX);
    memcpy(out + QUOTE_MAX, "...", 4);
    return out;
}

static void *field(struct gp_config *c, const struct entry *e)
{
    return (char *)c + e->off;
}

static const void *cfield(const struct gp_config *c, const struct entry *e)
{
    return (const char *)c + e->off;
}

static const struct section *find_section(const char *name)
{
    for (size_t i = 0; i < NSECTIONS; i++)
        if (strcmp(sections[i].name, name) == 0)
            return &sections[i];
    return NULL;
}

static int find_entry(const char *section, const char *key)
{
    for (size_t i = 0; i < NENTRIES; i++)
        if (strcmp(table[i].section, section) == 0 &&
            strcmp(table[i].key, key) == 0)
            return (int)i;
    return -1;
}

static const char *label(char *buf, size_t len, const char *section,
                         const char *key)
{
    snprintf(buf, len, "[%s] %s", section, key);
    return buf;
}

/* "name:line", cutting the front of a long name rather than the line off
 * the end of a gp_diag's where */
static const char *place(char *buf, size_t len, const char *name, int line)
{
    size_t room = sizeof(((struct gp_diag *)0)->where) - 1;
    size_t n = strlen(name);
    char num[16];
    int k = snprintf(num, sizeof(num), ":%d", line);

    if (n + (size_t)k > room)
        snprintf(buf, len, "...%s%s", name + n - (room - (size_t)k - 3), num);
    else
        snprintf(buf, len, "%s%s", name, num);
    return buf;
}

/* ---- values ------------------------------------------------------------- */

struct unit {
    const char *name;
    int64_t mult;
};

/* durations in microseconds */
static const struct unit duration_units[] = {
    {"us", 1},   {"ms", US_MS}, {"s", US_S}, {"m", US_M},
    {"h", US_H}, {"d", US_D},   {NULL, 0},
};
/* sizes in KiB, divided to MiB after */
static const struct unit size_units[] = {
    {"K", 1},
    {"KiB", 1},
    {"M", 1024},
    {"MiB", 1024},
    {"G", 1024 * 1024},
    {"GiB", 1024 * 1024},
    {"T", INT64_C(1024) * 1024 * 1024},
    {"TiB", INT64_C(1024) * 1024 * 1024},
    {NULL, 0},
};

enum num { NUM_OK, NUM_BAD, NUM_INEXACT, NUM_BIG };

static int64_t gcd(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* [+-]digits[.digits][blanks][unit], exactly: "1.5h" is 5400000000 us,
 * "0.5us" is NUM_INEXACT. units NULL: an integer, no fraction, no unit.
 * bare: the multiplier without a unit. */
static enum num parse_num(const char *s, const struct unit *units, int64_t bare,
                          int64_t *out)
{
    int64_t ip = 0, frac = 0, den = 1, mult = bare, whole, g;
    bool neg = false, digits = false, big = false;
    int nfrac = 0;

    if (*s == '+' || *s == '-')
        neg = *s++ == '-';
    for (; *s >= '0' && *s <= '9'; s++) {
        digits = true;
        if (__builtin_mul_overflow(ip, 10, &ip) ||
            __builtin_add_overflow(ip, *s - '0', &ip))
            big = true;
    }
    if (*s == '.' && units) {
        for (s++; *s >= '0' && *s <= '9'; s++) {
            digits = true;
            if (nfrac < 18) {
                frac = frac * 10 + (*s - '0');
                den *= 10;
                nfrac++;
            } else if (*s != '0') {
                return NUM_BAD; /* finer than any unit can hold */
            }
        }
    }
    if (!digits)
        return NUM_BAD;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s) {
        const struct unit *u = units;

        while (u && u->name && strcasecmp(u->name, s) != 0)
            u++;
        if (!u || !u->name)
            return NUM_BAD;
        mult = u->mult;
    }
    if (big || __builtin_mul_overflow(ip, mult, &whole))
        return NUM_BIG;
    /* frac / den * mult exactly: reduce den by what mult shares with it */
    g = gcd(den, mult);
    if (frac % (den / g))
        return NUM_INEXACT;
    if (__builtin_add_overflow(whole, frac / (den / g) * (mult / g), &whole))
        return NUM_BIG;
    *out = neg ? -whole : whole;
    return NUM_OK;
}

static const struct word *find_word(const struct word *w, const char *s)
{
    for (; w && w->word; w++)
        if (strcasecmp(w->word, s) == 0)
            return w;
    return NULL;
}

static const char *word_of(const struct word *w, int value)
{
    for (; w && w->word; w++)
        if (w->value == value)
            return w->word;
    return NULL;
}

static const struct word bool_words[] = {
    {"yes", 1}, {"no", 0}, {"true", 1}, {"false", 0}, {"on", 1},
    {"off", 0}, {"1", 1},  {"0", 0},    {NULL, 0},
};

static const struct word signal_words[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},
    {"QUIT", SIGQUIT},     {"ABRT", SIGABRT},
    {"KILL", SIGKILL},     {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},
    {"ALRM", SIGALRM},     {"TERM", SIGTERM},
    {"CONT", SIGCONT},     {"STOP", SIGSTOP},
    {"TSTP", SIGTSTP},     {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},     {"URG", SIGURG},
    {"XCPU", SIGXCPU},     {"XFSZ", SIGXFSZ},
    {"VTALRM", SIGVTALRM}, {"PROF", SIGPROF},
    {"SYS", SIGSYS},       {NULL, 0},
};

static void format_duration(char *buf, size_t len, int64_t us)
{
    static const struct unit order[] = {
        {"d", US_D}, {"h", US_H},   {"m", US_M},
        {"s", US_S}, {"ms", US_MS}, {"us", 1},
    };

    if (us == 0) {
        snprintf(buf, len, "0");
        return;
    }
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (us % order[i].mult == 0) {
            snprintf(buf, len, "%lld%s", (long long)(us / order[i].mult),
                     order[i].name);
            return;
        }
}

static void format_size(char *buf, size_t len, int64_t mib)
{
    if (mib != 0 && mib % MIB_T == 0)
        snprintf(buf, len, "%lldT", (long long)(mib / MIB_T));
    else if (mib != 0 && mib % MIB_G == 0)
        snprintf(buf, len, "%lldG", (long long)(mib / MIB_G));
    else if (mib != 0)
        snprintf(buf, len, "%lldM", (long long)mib);
    else
        snprintf(buf, len, "0");
}

static void format_number(char *buf, size_t len, const struct entry *e,
                          int64_t v)
{
    if (e->type == T_DURATION)
        format_duration(buf, len, v);
    else if (e->type == T_SIZE)
        format_size(buf, len, v);
    else
        snprintf(buf, len, "%lld", (long long)v);
}

static int signal_max(void)
{
    return SIGRTMAX;
}

/* A parsed value, not yet in a config. */
union value {
    char *s; /* T_STRING, T_PATH: allocated */
    bool b;
    int64_t i;
    int e; /* T_ENUM, T_SIGNAL */
};

static int parse_int(const struct entry *e, const char *text, const char *where,
                     const char *lab, union value *v, struct gp_diag *diag)
{
    char q[QUOTE_MAX + 4], lo[32], hi[32];
    const struct word *w = find_word(e->words, text);
    enum num r;
    int64_t x = 0;

    if (w) {
        v->i = w->value;
        return GP_OK;
    }
    if (e->type == T_DURATION)
        r = parse_num(text, duration_units, US_S, &x);
    else if (e->type == T_SIZE)
        r = parse_num(text, size_units, 1024, &x);
    else
        r = parse_num(text, NULL, 1, &x);
    if (r == NUM_OK && e->type == T_SIZE && x % 1024)
        r = NUM_INEXACT;
    if (r == NUM_BAD) {
        if (e->type == T_DURATION)
            return gp_diag_set(diag, GP_EPARSE, where,
                               "%s: '%s' is not a duration (use 30d, 12h, "
                               "90s)",
                               lab, quote(q, text));
        if (e->type == T_SIZE)
            return gp_diag_set(diag, GP_EPARSE, where,
                               "%s: '%s' is not a size (use 512M, 4G, 1T; a "
                               "bare number is MiB)",
                               lab, quote(q, text));
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: '%s' is not a whole number%s%s", lab,
                           quote(q, text), e->words ? " or " : "",
                           e->words ? e->words[0].word : "");
    }
    if (r == NUM_INEXACT)
        return gp_diag_set(
            diag, GP_EPARSE, where, "%s: '%s' is not a whole number of %s", lab,
            quote(q, text), e->type == T_SIZE ? "MiB" : "microseconds");
    if (e->type == T_SIZE)
        x /= 1024;
    if (r == NUM_BIG || x < e->min || x > e->max) {
        format_number(lo, sizeof(lo), e, e->min);
        format_number(hi, sizeof(hi), e, e->max);
        return gp_diag_set(diag, GP_ERANGE, where,
                           "%s: '%s' is out of range (%s to %s)", lab,
                           quote(q, text), lo, hi);
    }
    v->i = x;
    return GP_OK;
}

static int parse_signal(const char *text, const char *where, const char *lab,
                        union value *v, struct gp_diag *diag)
{
    char q[QUOTE_MAX + 4];
    const char *name = text;
    const struct word *w;
    int64_t x;

    if (strncasecmp(name, "SIG", 3) == 0)
        name += 3;
    if ((w = find_word(signal_words, name))) {
        v->e = w->value;
        return GP_OK;
    }
    if (parse_num(text, NULL, 1, &x) != NUM_OK)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: '%s' is not a signal (use SIGUSR1, USR1 or a "
                           "number)",
                           lab, quote(q, text));
    if (x < 1 || x > signal_max())
        return gp_diag_set(diag, GP_ERANGE, where,
                           "%s: '%s' is out of range (1 to %d)", lab,
                           quote(q, text), signal_max());
    v->e = (int)x;
    return GP_OK;
}

/* Parse text as e's type; nothing is stored. */
static int parse_value(const struct entry *e, const char *text,
                       const char *where, union value *v, struct gp_diag *diag)
{
    char lab[96], q[QUOTE_MAX + 4], list[160];
    const struct word *w;
    size_t o = 0;
    int rc;

    label(lab, sizeof(lab), e->section, e->key);
    switch (e->type) {
    case T_STRING:
    case T_PATH:
        if (!*text && !(e->flags & EMPTY_OK))
            return gp_diag_set(diag, GP_EPARSE, where, "%s: must not be empty",
                               lab);
        if (strlen(text) > GP_CONFIG_PATH_MAX)
            return gp_diag_set(diag, GP_ERANGE, where,
                               "%s: longer than %d bytes", lab,
                               GP_CONFIG_PATH_MAX);
        if (e->check && (rc = e->check(text, where, lab, diag)) != GP_OK)
            return rc;
        if (!(v->s = sdup(text)))
            return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
        return GP_OK;
    case T_BOOL:
        if (!(w = find_word(bool_words, text)))
            return gp_diag_set(diag, GP_EPARSE, where,
                               "%s: '%s' is not a yes/no value (use yes, no, "
                               "true, false, on, off, 1, 0)",
                               lab, quote(q, text));
        v->b = w->value != 0;
        return GP_OK;
    case T_INT:
    case T_DURATION:
    case T_SIZE:
        return parse_int(e, text, where, lab, v, diag);
    case T_ENUM:
        if ((w = find_word(e->words, text))) {
            v->e = w->value;
            return GP_OK;
        }
        list[0] = '\0';
        for (w = e->words; w->word && o < sizeof(list); w++)
            o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s",
                                  w == e->words ? "" : ", ", w->word);
        return gp_diag_set(diag, GP_EPARSE, where, "%s: '%s' is not one of %s",
                           lab, quote(q, text), list);
    case T_SIGNAL:
        return parse_signal(text, where, lab, v, diag);
    }
    return gp_diag_set(diag, GP_EINVAL, where, "%s: unknown type", lab);
}

/* Put a parsed value in place (taking v->s). A path goes to the given
 * texts; resolve() makes the field from it. */
static void store_value(struct gp_config *c, size_t i, union value *v)
{
    const struct entry *e = &table[i];

    switch (e->type) {
    case T_PATH:
        free(c->priv_->given[i]);
        c->priv_->given[i] = v->s;
        break;
    case T_STRING:
        free(*(char **)field(c, e));
        *(char **)field(c, e) = v->s;
        break;
    case T_BOOL:
        *(bool *)field(c, e) = v->b;
        break;
    case T_INT:
    case T_DURATION:
    case T_SIZE:
        *(int64_t *)field(c, e) = v->i;
        break;
    case T_ENUM:
    case T_SIGNAL:
        *(int *)field(c, e) = v->e;
        break;
    }
    v->s = NULL;
}

static void format_value(char *buf, size_t len, const struct gp_config *c,
                         const struct entry *e)
{
    const char *w;
    int64_t x;
    int sig;

    switch (e->type) {
    case T_STRING:
    case T_PATH:
        snprintf(buf, len, "%s", *(char *const *)cfield(c, e));
        return;
    case T_BOOL:
        snprintf(buf, len, "%s", *(const bool *)cfield(c, e) ? "yes" : "no");
        return;
    case T_INT:
    case T_DURATION:
    case T_SIZE:
        x = *(const int64_t *)cfield(c, e);
        if (x >= INT_MIN && x <= INT_MAX && (w = word_of(e->words, (int)x)))
            snprintf(buf, len, "%s", w);
        else
            format_number(buf, len, e, x);
        return;
    case T_ENUM:
        w = word_of(e->words, *(const int *)cfield(c, e));
        snprintf(buf, len, "%s", w ? w : "?");
        return;
    case T_SIGNAL:
        sig = *(const int *)cfield(c, e);
        if ((w = word_of(signal_words, sig)))
            snprintf(buf, len, "SIG%s", w);
        else
            snprintf(buf, len, "%d", sig);
        return;
    }
}

/* ---- string rules ------------------------------------------------------- */

static int check_listen(const char *value, const char *where, const char *lab,
                        struct gp_diag *diag)
{
    char q[QUOTE_MAX + 4];
    const char *colon, *p;
    long port = 0;

    if (!*value)
        return GP_OK;
    if (value[0] == '[') {
        const char *close = strchr(value, ']');

        colon = close && close[1] == ':' ? close + 1 : NULL;
        if (close == value + 1)
            colon = NULL;
    } else {
        colon = strrchr(value, ':');
        if (colon && memchr(value, ':', (size_t)(colon - value)))
            colon = NULL; /* a bare IPv6 address needs brackets */
        if (colon == value)
            colon = NULL;
    }
    for (p = value; colon && p < colon; p++)
        if (isspace((unsigned char)*p))
            colon = NULL;
    if (colon && colon[1])
        for (p = colon + 1; *p && port <= 65535; p++)
            port = *p >= '0' && *p <= '9' ? port * 10 + (*p - '0') : 65536;
    if (!colon || port < 1 || port > 65535)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "%s: '%s' is not host:port (e.g. 127.0.0.1:8443, "
                           "[::1]:8443)",
                           lab, quote(q, value));
    return GP_OK;
}

static int check_policy(const char *value, const char *where, const char *lab,
                        struct gp_diag *diag)
{
    char q[QUOTE_MAX + 4], list[256];
    size_t o = 0;

    if (gp_policy_lookup(value))
        return GP_OK;
    list[0] = '\0';
    for (size_t i = 0; gp_policy_at(i) && o < sizeof(list); i++)
        o += (size_t)snprintf(list + o, sizeof(list) - o, "%s%s", i ? ", " : "",
                              gp_policy_at(i)->name);
    return gp_diag_set(diag, GP_EPARSE, where,
                       "%s: unknown policy '%s' (known: %s)", lab,
                       quote(q, value), list);
}

/* A value a file can hold, so that a dump reads back: no control
 * characters, and no ';' that a file would take for a comment. */
static int check_writable(const char *value, const char *where,
                          struct gp_diag *diag)
{
    for (const char *p = value; *p; p++) {
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            return gp_diag_set(diag, GP_EPARSE, where,
                               "control character 0x%02x in the value",
                               (unsigned)(unsigned char)*p);
        if (*p == ';' && (p == value || isspace((unsigned char)p[-1])))
            return gp_diag_set(diag, GP_EPARSE, where,
                               "a value may not begin with ';' or hold one "
                               "after a blank (a file reads a comment there)");
    }
    return GP_OK;
}

static int check_policy_key(const char *key, const char *where,
                            struct gp_diag *diag)
{
    char q[QUOTE_MAX + 4];
    const char *p = key;

    for (; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_-.", *p))
            break;
    if (!*key || *p || p - key > POLICY_KEY_MAX)
        return gp_diag_set(diag, GP_EPARSE, where,
                           "[policy] key '%s' must be 1 to %d letters, "
                           "digits, '_', '-' or '.'",
                           quote(q, key), POLICY_KEY_MAX);
    return GP_OK;
}

/* ---- the config's life -------------------------------------------------- */

void gp_config_fini(struct gp_config *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < NENTRIES; i++) {
        if (table[i].type == T_STRING || table[i].type == T_PATH) {
            free(*(char **)field(c, &table[i]));
            *(char **)field(c, &table[i]) = NULL;
        }
        if (c->priv_)
            free(c->priv_->given[i]);
    }
    for (size_t i = 0; i < c->policy.n; i++) {
        free_const(c->policy.opts[i].key);
        free_const(c->policy.opts[i].value);
    }
    c->policy.n = 0;
    if (c->priv_)
        free(c->priv_->file);
    free(c->priv_);
    c->priv_ = NULL;
}

/* A zeroed config with its private part and every string "". */
static int blank(struct gp_config *c)
{
    memset(c, 0, sizeof(*c));
    if (!(c->priv_ = calloc(1, sizeof(*c->priv_))) ||
        !(c->priv_->file = sdup("")))
        goto fail;
    for (size_t i = 0; i < NENTRIES; i++)
        if ((table[i].type == T_STRING || table[i].type == T_PATH) &&
            !(*(char **)field(c, &table[i]) = sdup("")))
            goto fail;
    return GP_OK;
fail:
    gp_config_fini(c);
    return GP_ENOMEM;
}

static int copy(struct gp_config *dst, const struct gp_config *src)
{
    char **s;

    /* the values; strings and [policy] are made again below */
    *dst = *src;
    dst->policy.n = 0;
    for (size_t i = 0; i < NENTRIES; i++)
        if (table[i].type == T_STRING || table[i].type == T_PATH)
            *(char **)field(dst, &table[i]) = NULL;
    if (!(dst->priv_ = calloc(1, sizeof(*dst->priv_))))
        return GP_ENOMEM;
    memcpy(dst->priv_->line, src->priv_->line, sizeof(src->priv_->line));
    if (!(dst->priv_->file = sdup(src->priv_->file)))
        goto fail;
    for (size_t i = 0; i < NENTRIES; i++) {
        if (table[i].type != T_STRING && table[i].type != T_PATH)
            continue;
        s = (char **)field(dst, &table[i]);
        if (!(*s = sdup(*(char *const *)cfield(src, &table[i]))))
            goto fail;
        if (src->priv_->given[i] &&
            !(dst->priv_->given[i] = sdup(src->priv_->given[i])))
            goto fail;
    }
    for (size_t i = 0; i < src->policy.n; i++) {
        struct gp_kv *kv = &dst->policy.opts[i];

        kv->key = sdup(src->policy.opts[i].key);
        kv->value = sdup(src->policy.opts[i].value);
        dst->policy.n++;
        if (!kv->key || !kv->value)
            goto fail;
    }
    return GP_OK;
fail:
    gp_config_fini(dst);
    return GP_ENOMEM;
}

/* where a key's value came from, for messages about it after the fact */
static const char *origin(char *buf, size_t len, const struct gp_config *c,
                          size_t i)
{
    int line = c->priv_ ? c->priv_->line[i] : 0;

    if (line > 0)
        place(buf, len, c->priv_->file, line);
    else if (line < 0)
        snprintf(buf, len, "--set %s.%s", table[i].section, table[i].key);
    else
        snprintf(buf, len, "%s.%s", table[i].section, table[i].key);
    return buf;
}

int gp__config_state_dir_rule(bool root, const char *xdg_state_home,
                              const char *home, char **out)
{
    const char *base, *tail;
    size_t n;
    char *p;

    if (root) {
        base = "/var/lib/gpupool";
        tail = "";
    } else if (xdg_state_home && xdg_state_home[0] == '/') {
        base = xdg_state_home;
        tail = "/gpupool";
    } else if (home && home[0] == '/') {
        base = home;
        tail = "/.local/state/gpupool";
    } else {
        return GP_EINVAL;
    }
    /* "/home/u/" + "/.local..." would give "//" */
    n = strlen(base);
    while (n > 0 && base[n - 1] == '/' && *tail)
        n--;
    if (!(p = malloc(n + strlen(tail) + 1)))
        return GP_ENOMEM;
    memcpy(p, base, n);
    strcpy(p + n, tail);
    *out = p;
    return GP_OK;
}

static int default_state_dir(char **out, const char *where,
                             struct gp_diag *diag)
{
    const char *home = getenv("HOME");
    struct passwd pw, *found = NULL;
    char buf[4096];
    int rc;

    if ((!home || home[0] != '/') &&
        getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &found) == 0 && found)
        home = pw.pw_dir;
    rc = gp__config_state_dir_rule(geteuid() == 0, getenv("XDG_STATE_HOME"),
                                   home, out);
    if (rc == GP_EINVAL)
        return gp_diag_set(diag, rc, where,
                           "no home directory to keep state in: set "
                           "[server] state_dir");
    if (rc != GP_OK)
        return gp_diag_set(diag, rc, where, "out of memory");
    return GP_OK;
}

/* base/rel, or rel when it is absolute; GP_ERANGE past the path limit */
static int join(const char *base, const char *rel, char **out,
                const char *where, const char *lab, struct gp_diag *diag)
{
    size_t nb = strlen(base), nr = strlen(rel);
    char *p;

    if (rel[0] == '/' || !rel[0])
        nb = 0;
    while (nb > 1 && base[nb - 1] == '/')
        nb--;
    if (nb + 1 + nr > GP_CONFIG_PATH_MAX)
        return gp_diag_set(diag, GP_ERANGE, where,
                           "%s: longer than %d bytes once resolved", lab,
                           GP_CONFIG_PATH_MAX);
    if (!(p = malloc(nb + nr + 2)))
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    memcpy(p, base, nb);
    if (nb && base[nb - 1] != '/')
        p[nb++] = '/';
    memcpy(p + nb, rel, nr + 1);
    *out = p;
    return GP_OK;
}

/* Every path field from its given text: state_dir first (the rule when
 * empty, from the working folder when relative), the others from it.
 * All or nothing: on error the fields are as they were. */
static int resolve(struct gp_config *c, struct gp_diag *diag)
{
    char *out[NENTRIES] = {0};
    char where[192], lab[96], *dir = NULL, cwd[GP_CONFIG_PATH_MAX + 1];
    size_t sd = 0;
    int rc = GP_OK;

    while (!(table[sd].flags & STATE_DIR))
        sd++;
    origin(where, sizeof(where), c, sd);
    label(lab, sizeof(lab), table[sd].section, table[sd].key);
    if (!c->priv_->given[sd] || !c->priv_->given[sd][0]) {
        rc = default_state_dir(&dir, where, diag);
    } else if (c->priv_->given[sd][0] != '/') {
        if (!getcwd(cwd, sizeof(cwd)))
            rc = gp_diag_set(diag, GP_EIO, where,
                             "%s: cannot resolve a relative path: %s", lab,
                             strerror(errno));
        else
            rc = join(cwd, c->priv_->given[sd], &dir, where, lab, diag);
    } else {
        rc = join("", c->priv_->given[sd], &dir, where, lab, diag);
    }
    if (rc != GP_OK)
        goto fail;
    out[sd] = dir;
    for (size_t i = 0; i < NENTRIES; i++) {
        if (table[i].type != T_PATH || i == sd)
            continue;
        origin(where, sizeof(where), c, i);
        label(lab, sizeof(lab), table[i].section, table[i].key);
        if ((rc = join(dir, c->priv_->given[i] ? c->priv_->given[i] : "",
                       &out[i], where, lab, diag)) != GP_OK)
            goto fail;
    }
    for (size_t i = 0; i < NENTRIES; i++) {
        if (table[i].type != T_PATH)
            continue;
        free(*(char **)field(c, &table[i]));
        *(char **)field(c, &table[i]) = out[i];
    }
    return GP_OK;
fail:
    for (size_t i = 0; i < NENTRIES; i++)
        free(out[i]);
    return rc;
}

/* The table's defaults into a blank config, paths not yet resolved. */
static int set_defaults(struct gp_config *c, struct gp_diag *diag)
{
    char where[96];
    int rc;

    for (size_t i = 0; i < NENTRIES; i++) {
        union value v = {0};

        snprintf(where, sizeof(where), "default of %s.%s", table[i].section,
                 table[i].key);
        if ((rc = parse_value(&table[i], table[i].def, where, &v, diag)) !=
            GP_OK)
            return rc;
        store_value(c, i, &v);
    }
    return GP_OK;
}

int gp_config_defaults(struct gp_config *c, struct gp_diag *diag)
{
    struct gp_config tmp;
    int rc;

    if (!c)
        return gp_diag_set(diag, GP_EINVAL, "config", "no config");
    if ((rc = blank(&tmp)) != GP_OK)
        return gp_diag_set(diag, rc, "config", "out of memory");
    if ((rc = set_defaults(&tmp, diag)) != GP_OK ||
        (rc = resolve(&tmp, diag)) != GP_OK)
        goto fail;
    *c = tmp;
    return GP_OK;
fail:
    gp_config_fini(&tmp);
    return rc;
}

/* ---- [policy] ----------------------------------------------------------- */

static int policy_put(struct gp_config *c, const char *key, const char *value,
                      bool replace, const char *where, int *dup_index,
                      struct gp_diag *diag)
{
    char q[QUOTE_MAX + 4];
    struct gp_kv *kv;
    char *k = NULL, *v = NULL;
    int rc;

    if ((rc = check_policy_key(key, where, diag)) != GP_OK)
        return rc;
    if (strlen(value) > GP_CONFIG_PATH_MAX)
        return gp_diag_set(diag, GP_ERANGE, where,
                           "[policy] %s: longer than %d bytes", key,
                           GP_CONFIG_PATH_MAX);
    for (size_t i = 0; i < c->policy.n; i++) {
        if (strcmp(c->policy.opts[i].key, key) != 0)
            continue;
        if (!replace) {
            *dup_index = (int)i;
            return gp_diag_set(diag, GP_EPARSE, where,
                               "duplicate key '%s' in [policy]", quote(q, key));
        }
        if (!(v = sdup(value)))
            return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
        free_const(c->policy.opts[i].value);
        c->policy.opts[i].value = v;
        return GP_OK;
    }
    if (c->policy.n == GP_CONFIG_POLICY_MAX)
        return gp_diag_set(diag, GP_ERANGE, where,
                           "[policy] holds at most %d keys",
                           GP_CONFIG_POLICY_MAX);
    if (!(k = sdup(key)) || !(v = sdup(value))) {
        free(k);
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    }
    kv = &c->policy.opts[c->policy.n++];
    kv->key = k;
    kv->value = v;
    return GP_OK;
}

/* ---- reading a file ----------------------------------------------------- */

struct load {
    struct gp_config *c;
    const char *name;    /* the file, for messages */
    const char *start;   /* the text, past a byte order mark */
    const char *p, *end; /* the text not yet read */
    int lineno;          /* the line last handed to libinih */
    char section[64];    /* the current section ("" before any) */
    int first[NENTRIES]; /* the line each key was set on */
    int pfirst[GP_CONFIG_POLICY_MAX];
    int err; /* the first error we found, and its line */
    int err_line;
    struct gp_diag *diag;
};

static int load_fail(struct load *L, int rc)
{
    if (!L->err) {
        L->err = rc;
        L->err_line = L->lineno;
    }
    return rc;
}

static const char *load_where(struct load *L, char *buf, size_t len)
{
    return place(buf, len, L->name, L->lineno);
}

static void list_sections(char *buf, size_t len)
{
    size_t o = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < NSECTIONS && o < len; i++)
        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
                              sections[i].name);
}

/* One key = value pair of the current file. */
static int handle(struct load *L, const char *section, const char *name,
                  const char *value)
{
    char where[192], q[QUOTE_MAX + 4], list[160];
    union value v = {0};
    int i, rc, dup_index = -1;

    load_where(L, where, sizeof(where));
    /* "key=;x" would dump as "key = ;x", a comment */
    if ((rc = check_writable(value, where, L->diag)) != GP_OK)
        return load_fail(L, rc);
    if (!section[0]) {
        list_sections(list, sizeof(list));
        return load_fail(L, gp_diag_set(L->diag, GP_EPARSE, where,
                                        "key '%s' is outside any section "
                                        "(sections: %s)",
                                        quote(q, name), list));
    }
    if (strcmp(section, "policy") == 0) {
        rc = policy_put(L->c, name, value, false, where, &dup_index, L->diag);
        if (rc != GP_OK && dup_index >= 0)
            rc = gp_diag_set(L->diag, rc, where,
                             "duplicate key '%s' in [policy] (first set on "
                             "line %d)",
                             quote(q, name), L->pfirst[dup_index]);
        else if (rc == GP_OK)
            L->pfirst[L->c->policy.n - 1] = L->lineno;
        return rc == GP_OK ? rc : load_fail(L, rc);
    }
    if ((i = find_entry(section, name)) < 0) {
        for (size_t k = 0; k < NENTRIES; k++)
            if (strcmp(table[k].key, name) == 0)
                return load_fail(
                    L, gp_diag_set(L->diag, GP_EPARSE, where,
                                   "unknown key '%s' in [%s] (it belongs in "
                                   "[%s])",
                                   quote(q, name), section, table[k].section));
        return load_fail(L, gp_diag_set(L->diag, GP_EPARSE, where,
                                        "unknown key '%s' in [%s]",
                                        quote(q, name), section));
    }
    if (L->first[i])
        return load_fail(L, gp_diag_set(L->diag, GP_EPARSE, where,
                                        "duplicate key '%s' in [%s] (first "
                                        "set on line %d)",
                                        name, section, L->first[i]));
    if ((rc = parse_value(&table[i], value, where, &v, L->diag)) != GP_OK)
        return load_fail(L, rc);
    store_value(L->c, (size_t)i, &v);
    L->first[i] = L->lineno;
    L->c->priv_->line[i] = L->lineno;
    return GP_OK;
}

static int on_pair(void *user, const char *section, const char *name,
                   const char *value)
{
    return handle(user, section, name, value) == GP_OK;
}

/* libinih's rule: up to one of chars, or to a ';' after a blank */
static const char *find_chars_or_comment(const char *s, const char *chars)
{
    bool was_space = false;

    while (*s && (!chars || !strchr(chars, *s)) && !(was_space && *s == ';')) {
        was_space = isspace((unsigned char)*s);
        s++;
    }
    return s;
}

static int not_a_line(struct load *L, const char *line)
{
    char where[192], q[QUOTE_MAX + 4];

    return load_fail(L, gp_diag_set(L->diag, GP_EPARSE,
                                    load_where(L, where, sizeof(where)),
                                    "'%s' is no [section], key = value or "
                                    "comment",
                                    quote(q, line)));
}

/* A line too long for libinih's buffer, read by its rules: a comment is
 * nothing, a pair is split here, anything else is an error. */
static int handle_long(struct load *L, char *line)
{
    char *end, *name_end, *value;

    if (*line == ';' || *line == '#')
        return GP_OK;
    end = (char *)(uintptr_t)find_chars_or_comment(line, "=:");
    if (*line == '[' || (*end != '=' && *end != ':'))
        return not_a_line(L, line);
    for (name_end = end;
         name_end > line && isspace((unsigned char)name_end[-1]);)
        name_end--;
    *name_end = '\0';
    for (value = end + 1; isspace((unsigned char)*value);)
        value++;
    end = (char *)(uintptr_t)find_chars_or_comment(value, NULL);
    while (end > value && isspace((unsigned char)end[-1]))
        end--;
    *end = '\0';
    return handle(L, L->section, line, value);
}

/* libinih's reader: one line a call, counted. NULL at the end of the text
 * and after an error, which stops the parse there. */
static char *next_line(char *str, int num, void *stream)
{
    struct load *L = stream;
    const char *nl, *s, *e;
    char where[192], q[QUOTE_MAX + 4], list[160], *buf = NULL;
    size_t len;

    if (L->err || L->p >= L->end)
        return NULL;
    L->lineno++;
    load_where(L, where, sizeof(where));
    nl = memchr(L->p, '\n', (size_t)(L->end - L->p));
    e = nl ? nl : L->end;
    s = L->p;
    L->p = nl ? nl + 1 : L->end;
    if ((size_t)(e - s) > GP_CONFIG_LINE_MAX) {
        load_fail(L,
                  gp_diag_set(L->diag, GP_EPARSE, where,
                              "line longer than %d bytes", GP_CONFIG_LINE_MAX));
        return NULL;
    }
    for (const char *p = s; p < e; p++) {
        unsigned char ch = (unsigned char)*p;

        if ((ch < 0x20 && ch != '\t' && !(ch == '\r' && p + 1 == e)) ||
            ch == 0x7f) {
            load_fail(L, gp_diag_set(L->diag, GP_EPARSE, where,
                                     "control character 0x%02x", ch));
            return NULL;
        }
    }
    /* blanks at either end mean nothing (and leading ones would make
     * libinih take the line for the continuation of the one before) */
    while (s < e && isspace((unsigned char)*s))
        s++;
    while (e > s && isspace((unsigned char)e[-1]))
        e--;
    len = (size_t)(e - s);
    if (len && *s == '[') {
        /* a section header: name an unknown one here, where it is */
        char name[GP_CONFIG_LINE_MAX + 1];
        const char *close;

        memcpy(name, s, len);
        name[len] = '\0';
        close = find_chars_or_comment(name + 1, "]");
        if (*close == ']') {
            name[close - name] = '\0';
            if (!find_section(name + 1)) {
                list_sections(list, sizeof(list));
                load_fail(L, gp_diag_set(L->diag, GP_EPARSE, where,
                                         "unknown section [%s] (sections: "
                                         "%s)",
                                         quote(q, name + 1), list));
                return NULL;
            }
            snprintf(L->section, sizeof(L->section), "%s", name + 1);
        }
    }
    if (len + 1 <= (size_t)num) {
        memcpy(str, s, len);
        str[len] = '\0';
        return str;
    }
    /* too long for libinih: hand it a blank line and read this one here */
    if (!(buf = malloc(len + 1))) {
        load_fail(L, gp_diag_set(L->diag, GP_ENOMEM, where, "out of memory"));
        return NULL;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    handle_long(L, buf);
    free(buf);
    str[0] = '\0';
    return L->err ? NULL : str;
}

/* the text of line n, for a message about it */
static void line_text(const char *text, size_t len, int n, char *out,
                      size_t outlen)
{
    const char *p = text, *end = text + len, *nl;
    size_t k;

    for (int i = 1; i < n && p < end; i++) {
        nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl + 1 : end;
    }
    nl = memchr(p, '\n', (size_t)(end - p));
    k = (size_t)((nl ? nl : end) - p);
    while (k && isspace((unsigned char)p[k - 1]))
        k--;
    while (k && isspace((unsigned char)*p))
        p++, k--;
    if (k > QUOTE_MAX) {
        snprintf(out, outlen, "%.*s...", QUOTE_MAX, p);
        return;
    }
    snprintf(out, outlen, "%.*s", (int)k, p);
}

int gp_config_parse(struct gp_config *c, const char *name, const char *text,
                    size_t len, struct gp_diag *diag)
{
    struct gp_config tmp;
    struct load *L = NULL;
    char where[192], q[QUOTE_MAX + 8], *file;
    int rc, ret;

    if (!c || (!text && len) || !name)
        return gp_diag_set(diag, GP_EINVAL, name ? name : "config",
                           "no config, file name or text");
    if ((rc = gp_config_defaults(&tmp, diag)) != GP_OK)
        return rc;
    if (!(L = calloc(1, sizeof(*L))) || !(file = sdup(name))) {
        rc = gp_diag_set(diag, GP_ENOMEM, name, "out of memory");
        goto fail;
    }
    free(tmp.priv_->file);
    tmp.priv_->file = file;
    L->c = &tmp;
    L->name = name;
    L->p = text ? text : "";
    L->end = L->p + len;
    L->diag = diag;
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
        L->p += 3; /* a UTF-8 byte order mark */
    L->start = L->p;
    if (len > GP_CONFIG_FILE_MAX) {
        rc = gp_diag_set(diag, GP_EPARSE, name, "larger than %d bytes",
                         GP_CONFIG_FILE_MAX);
        goto fail;
    }
    ret = ini_parse_stream(next_line, L, on_pair, L);
    if (ret > 0 && (!L->err || ret < L->err_line)) {
        /* libinih found the line to be no section, pair or comment */
        place(where, sizeof(where), name, ret);
        line_text(L->start, (size_t)(L->end - L->start), ret, q, sizeof(q));
        rc = gp_diag_set(diag, GP_EPARSE, where,
                         "'%s' is no [section], key = value or comment", q);
        goto fail;
    }
    if (ret < 0 && !L->err) {
        rc = gp_diag_set(diag, GP_ENOMEM, name, "out of memory");
        goto fail;
    }
    if ((rc = L->err) != GP_OK || (rc = resolve(&tmp, diag)) != GP_OK)
        goto fail;
    free(L);
    *c = tmp;
    return GP_OK;
fail:
    free(L);
    gp_config_fini(&tmp);
    return rc;
}

int gp_config_load(struct gp_config *c, const char *path, struct gp_diag *diag)
{
    FILE *f;
    char *text = NULL;
    size_t len = 0, n;
    int rc;

    if (!path)
        return gp_config_defaults(c, diag);
    if (!(f = fopen(path, "rb")))
        return gp_diag_set(diag, GP_EIO, path, "cannot open: %s",
                           strerror(errno));
    if (!(text = malloc(GP_CONFIG_FILE_MAX + 1))) {
        fclose(f);
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    }
    /* one byte past the cap tells a file that is too large */
    while (len <= GP_CONFIG_FILE_MAX &&
           (n = fread(text + len, 1, GP_CONFIG_FILE_MAX + 1 - len, f)) > 0)
        len += n;
    if (ferror(f)) {
        rc =
            gp_diag_set(diag, GP_EIO, path, "cannot read: %s", strerror(errno));
        goto fail;
    }
    rc = gp_config_parse(c, path, text, len, diag);
fail:
    fclose(f);
    free(text);
    return rc;
}

/* ---- --set -------------------------------------------------------------- */

int gp_config_set(struct gp_config *c, const char *section_key,
                  const char *value, struct gp_diag *diag)
{
    char where[192], section[64], q[QUOTE_MAX + 4], list[160], *val = NULL;
    const char *dot, *key, *s, *e;
    struct gp_config tmp;
    union value v = {0};
    int i = -1, rc, dup_index = -1;

    if (!c || !c->priv_ || !section_key || !value)
        return gp_diag_set(diag, GP_EINVAL, "--set", "no config, key or value");
    snprintf(where, sizeof(where), "--set %s", section_key);
    dot = strchr(section_key, '.');
    if (!dot || dot == section_key || !dot[1] ||
        (size_t)(dot - section_key) >= sizeof(section))
        return gp_diag_set(diag, GP_EPARSE, where,
                           "expected section.key, got '%s'",
                           quote(q, section_key));
    memcpy(section, section_key, (size_t)(dot - section_key));
    section[dot - section_key] = '\0';
    key = dot + 1;
    if (!find_section(section)) {
        list_sections(list, sizeof(list));
        return gp_diag_set(diag, GP_EPARSE, where,
                           "unknown section [%s] (sections: %s)",
                           quote(q, section), list);
    }
    if (strcmp(section, "policy") != 0 && (i = find_entry(section, key)) < 0)
        return gp_diag_set(diag, GP_EPARSE, where, "unknown key '%s' in [%s]",
                           quote(q, key), section);
    for (s = value; isspace((unsigned char)*s);)
        s++;
    for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
        e--;
    if (!(val = malloc((size_t)(e - s) + 1)))
        return gp_diag_set(diag, GP_ENOMEM, where, "out of memory");
    memcpy(val, s, (size_t)(e - s));
    val[e - s] = '\0';
    if ((rc = check_writable(val, where, diag)) != GP_OK)
        goto out;
    if ((rc = copy(&tmp, c)) != GP_OK) {
        rc = gp_diag_set(diag, rc, where, "out of memory");
        goto out;
    }
    if (i < 0) {
        rc = policy_put(&tmp, key, val, true, where, &dup_index, diag);
    } else if ((rc = parse_value(&table[i], val, where, &v, diag)) == GP_OK) {
        store_value(&tmp, (size_t)i, &v);
        tmp.priv_->line[i] = -1;
        rc = resolve(&tmp, diag);
    }
    if (rc != GP_OK) {
        gp_config_fini(&tmp);
        goto out;
    }
    gp_config_fini(c);
    *c = tmp;
out:
    free(val);
    return rc;
}

/* ---- rules between keys ------------------------------------------------- */

int gp_config_check(const struct gp_config *c, struct gp_diag *diag)
{
    char where[192], q[QUOTE_MAX + 4];
    int listen = find_entry("server", "listen");
    int sock = find_entry("server", "socket");
    int sd = find_entry("server", "state_dir");
    size_t n;

    if (!c || !c->priv_)
        return gp_diag_set(diag, GP_EINVAL, "config", "no config");
    if (c->server.listen[0] && c->server.tls &&
        (!c->server.tls_cert[0] || !c->server.tls_key[0]))
        return gp_diag_set(diag, GP_EINVAL,
                           origin(where, sizeof(where), c, (size_t)listen),
                           "[server] listen = %s needs tls_cert and tls_key "
                           "(or tls = off)",
                           quote(q, c->server.listen));
    if ((n = strlen(c->server.socket)) > SOCKET_PATH_MAX) {
        /* a default socket is long because of its state_dir */
        size_t at = c->priv_->line[sock] == 0 && c->priv_->given[sock] &&
                            c->priv_->given[sock][0] != '/'
                        ? (size_t)sd
                        : (size_t)sock;

        return gp_diag_set(diag, GP_EINVAL, origin(where, sizeof(where), c, at),
                           "[server] socket: '%s' is %zu bytes, more than the "
                           "%d a Unix socket address holds",
                           quote(q, c->server.socket), n, SOCKET_PATH_MAX);
    }
    return GP_OK;
}

/* ---- dump, diff, doc ---------------------------------------------------- */

int gp_config_dump(const struct gp_config *c, FILE *out)
{
    char buf[GP_CONFIG_PATH_MAX + 64];

    fprintf(out, "# gpupool serve: the effective configuration\n");
    for (size_t s = 0; s < NSECTIONS; s++) {
        fprintf(out, "\n[%s]\n", sections[s].name);
        if (strcmp(sections[s].name, "policy") == 0)
            for (size_t i = 0; i < c->policy.n; i++)
                fprintf(out, "%s =%s%s\n", c->policy.opts[i].key,
                        c->policy.opts[i].value[0] ? " " : "",
                        c->policy.opts[i].value);
        for (size_t i = 0; i < NENTRIES; i++) {
            if (strcmp(table[i].section, sections[s].name) != 0)
                continue;
            format_value(buf, sizeof(buf), c, &table[i]);
            fprintf(out, "%s =%s%s\n", table[i].key, buf[0] ? " " : "", buf);
        }
    }
    return ferror(out) ? GP_EIO : GP_OK;
}

static bool entry_equal(const struct gp_config *a, const struct gp_config *b,
                        const struct entry *e)
{
    switch (e->type) {
    case T_STRING:
    case T_PATH:
        return strcmp(*(char *const *)cfield(a, e),
                      *(char *const *)cfield(b, e)) == 0;
    case T_BOOL:
        return *(const bool *)cfield(a, e) == *(const bool *)cfield(b, e);
    case T_INT:
    case T_DURATION:
    case T_SIZE:
        return *(const int64_t *)cfield(a, e) == *(const int64_t *)cfield(b, e);
    case T_ENUM:
    case T_SIGNAL:
        return *(const int *)cfield(a, e) == *(const int *)cfield(b, e);
    }
    return false;
}

size_t gp_config_diff(const struct gp_config *a, const struct gp_config *b,
                      const char **names, size_t max)
{
    size_t n = 0;
    bool same = a->policy.n == b->policy.n;

    for (size_t i = 0; i < NENTRIES; i++)
        if (!entry_equal(a, b, &table[i])) {
            if (n < max)
                names[n] = table[i].name;
            n++;
        }
    for (size_t i = 0; same && i < a->policy.n; i++)
        same = strcmp(a->policy.opts[i].key, b->policy.opts[i].key) == 0 &&
               strcmp(a->policy.opts[i].value, b->policy.opts[i].value) == 0;
    if (!same) {
        if (n < max)
            names[n] = "policy";
        n++;
    }
    return n;
}

bool gp_config_is_reloadable(const char *section_key)
{
    if (!section_key)
        return false;
    if (strcmp(section_key, "policy") == 0 ||
        (strncmp(section_key, "policy.", 7) == 0 && section_key[7]))
        return true;
    for (size_t i = 0; i < NENTRIES; i++)
        if (strcmp(table[i].name, section_key) == 0)
            return (table[i].flags & RELOAD) != 0;
    return false;
}

static const char doc_intro[] =
    "# Configuration\n"
    "\n"
    "<!-- Generated from the table in src/daemon/config.c; do not edit.\n"
    "     Regenerate with: ninja -C build config-doc -->\n"
    "\n"
    "`gpupool serve` reads one INI file, `gpupool serve --config FILE`. "
    "Without\n"
    "one, every key has its default, so a daemon for one user needs no file "
    "at all.\n"
    "\n"
    "```ini\n"
    "; a shared machine: the API on TCP too, fair-share pooling\n"
    "[server]\n"
    "listen = 0.0.0.0:8443\n"
    "tls_cert = /etc/gpupool/cert.pem\n"
    "tls_key = /etc/gpupool/key.pem\n"
    "\n"
    "[scheduler]\n"
    "policy = pool\n"
    "tenants = /etc/gpupool/tenants.json\n"
    "grace = 2m\n"
    "\n"
    "[policy]\n"
    "# any key: the policy checks its own options\n"
    "\n"
    "[store]\n"
    "retention = 90d\n"
    "```\n"
    "\n"
    "## The file\n"
    "\n"
    "- `[section]` headers, then `key = value` lines (`key: value` works "
    "too).\n"
    "  A line that starts with `;` or `#` is a comment, and so is the rest "
    "of a\n"
    "  line from a `;` that follows a blank. Blanks around keys and values "
    "do not\n"
    "  count, and values are not quoted. Indenting a line changes nothing.\n"
    "- Section and key names are lowercase as below; words (`yes`, `pack`, "
    "units)\n"
    "  may be in any case. A line holds at most 8192 bytes, a file 1 MiB, "
    "and\n"
    "  neither holds control characters.\n"
    "- A key left out has its default. An unknown section, an unknown key "
    "(except\n"
    "  in `[policy]`), a key given twice, a line that is no section, key or\n"
    "  comment, and a value of the wrong type or out of bounds are errors "
    "that\n"
    "  name the file and line, and the daemon does not start:\n"
    "  `gpupool.ini:12: [store] retention: 'abc' is not a duration (use 30d, "
    "12h, 90s)`.\n"
    "- `--set section.key=value` (repeatable) overrides the file, parsed the "
    "same\n"
    "  way; errors name `--set section.key`. `--set policy.KEY=VALUE` sets "
    "an\n"
    "  option of the policy.\n"
    "- Between keys: `listen` needs `tls_cert` and `tls_key` unless `tls = "
    "off`;\n"
    "  the socket's resolved path holds at most 107 bytes. These are checked "
    "after\n"
    "  the last `--set`, so a file may leave a key for the command line. "
    "`tls = off`\n"
    "  is taken only for a `listen` on a loopback address (checked when the "
    "daemon\n"
    "  starts listening).\n"
    "- SIGHUP re-reads the file (with the same `--set`s) and applies "
    "`[scheduler]\n"
    "  tenants` and `[policy]` at once (docs/daemon.md, \"Signals and "
    "logs\"); other\n"
    "  keys that changed are logged and need a restart. A file with an error "
    "changes\n"
    "  nothing: the daemon logs it and goes on with what it had.\n"
    "\n"
    "## Types\n"
    "\n"
    "| type | written as |\n"
    "|---|---|\n"
    "| string | the text as it stands |\n"
    "| path | absolute, or relative to `state_dir` (`state_dir` itself: "
    "relative to the folder the daemon starts in); no `~` expansion |\n"
    "| bool | `yes`, `no`, `true`, `false`, `on`, `off`, `1`, `0` |\n"
    "| integer | a whole number within the bounds |\n"
    "| duration | a number with a unit: `us`, `ms`, `s`, `m`, `h`, `d` "
    "(`90s`, `1.5h`, `30d`); a bare number is seconds; a whole number of "
    "microseconds |\n"
    "| size | a number with a unit: `K`, `M`, `G`, `T` (KiB to TiB; `512M`, "
    "`1.5G`); a bare number is MiB; a whole number of MiB |\n"
    "| enum | one of the words listed |\n"
    "| signal | a name, with or without `SIG` (`SIGUSR1`, `USR1`), or a "
    "number |\n"
    "\n"
    "## Where state lives\n"
    "\n"
    "`[server] state_dir` holds the socket, the store, the tokens and the "
    "job\n"
    "folders unless those keys say otherwise. Left empty or out, it is\n"
    "`/var/lib/gpupool` when the daemon runs as root; otherwise\n"
    "`$XDG_STATE_HOME/gpupool` when `XDG_STATE_HOME` is an absolute path, "
    "else\n"
    "`$HOME/.local/state/gpupool` (`HOME`, or the user's home directory from "
    "the\n"
    "password database). It is resolved when the config is loaded, and "
    "every\n"
    "relative path then hangs from it: `socket = api.sock` is\n"
    "`<state_dir>/api.sock`, also when `state_dir` is given later or by "
    "`--set`.\n";

static const char policy_doc[] =
    "Options of the policy that `[scheduler] policy` names. This is the one "
    "section\n"
    "where any key is allowed: its keys (letters, digits, `_`, `-` and `.`; "
    "at most\n"
    "64) are handed to the policy in file order as strings, and the policy "
    "checks\n"
    "them itself: it reports a key it does not know or a bad value when the "
    "daemon\n"
    "starts. A key given twice is an error here too. SIGHUP reloads them.\n";

/* a table cell: '|' would end it */
static void cell(FILE *out, const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', out);
        fputc(*s, out);
    }
}

static void doc_words(FILE *out, const struct word *w)
{
    for (const struct word *p = w; p && p->word; p++)
        fprintf(out, "%s`%s`", p == w ? "" : ", ", p->word);
}

static void doc_allowed(FILE *out, const struct entry *e)
{
    char lo[32], hi[32];

    if (e->doc_values) {
        cell(out, e->doc_values);
        return;
    }
    switch (e->type) {
    case T_STRING:
        if (e->check == check_policy)
            for (size_t i = 0; gp_policy_at(i); i++)
                fprintf(out, "%s`%s`", i ? ", " : "", gp_policy_at(i)->name);
        else if (e->flags & EMPTY_OK)
            fprintf(out, "any, empty");
        else
            fprintf(out, "any, not empty");
        break;
    case T_PATH:
        fprintf(out, "%s%s", e->flags & STATE_DIR ? "a folder" : "a path",
                e->flags & EMPTY_OK ? ", empty" : "");
        break;
    case T_BOOL:
        fprintf(out, "`yes`, `no`");
        break;
    case T_INT:
    case T_DURATION:
    case T_SIZE:
        format_number(lo, sizeof(lo), e, e->min);
        format_number(hi, sizeof(hi), e, e->max);
        if (e->words) {
            doc_words(out, e->words);
            fprintf(out, ", ");
        }
        fprintf(out, "%s to %s", lo, hi);
        break;
    case T_ENUM:
        doc_words(out, e->words);
        break;
    case T_SIGNAL:
        fprintf(out, "a name or a number");
        break;
    }
}

static void doc_default(FILE *out, const struct entry *e)
{
    if (e->doc_default)
        cell(out, e->doc_default);
    else if (!e->def[0])
        fprintf(out, "empty");
    else if (e->type == T_PATH && e->def[0] != '/')
        fprintf(out, "`<state_dir>/%s`", e->def);
    else
        fprintf(out, "`%s`", e->def);
}

int gp_config_write_doc(FILE *out)
{
    fputs(doc_intro, out);
    for (size_t s = 0; s < NSECTIONS; s++) {
        fprintf(out, "\n## [%s]\n\n", sections[s].name);
        if (!sections[s].doc) {
            fputs(policy_doc, out);
            continue;
        }
        fprintf(out, "%s\n\n", sections[s].doc);
        fprintf(out, "| key | type | default | allowed | meaning |\n");
        fprintf(out, "|---|---|---|---|---|\n");
        for (size_t i = 0; i < NENTRIES; i++) {
            const struct entry *e = &table[i];

            if (strcmp(e->section, sections[s].name) != 0)
                continue;
            fprintf(out, "| `%s` | %s | ", e->key, type_names[e->type]);
            doc_default(out, e);
            fprintf(out, " | ");
            doc_allowed(out, e);
            fprintf(out, " | ");
            cell(out, e->doc);
            fprintf(out, " |\n");
        }
    }
    return ferror(out) ? GP_EIO : GP_OK;
}
