/* config.h - the configuration of `gpupool serve`: an INI file, overrides
 * from the command line (--set section.key=value) and defaults.
 *
 * One static table in config.c names every key with its section, type,
 * place in struct gp_config, default, bounds and a one-line doc (the idea
 * of Redis' config.c standardConfig). The file parser, --set, the dump of
 * the effective config and docs/config.md are all driven by that table, so
 * a key added there is parsed, defaulted, dumped and documented at once.
 *
 * Typical use, at start and on SIGHUP alike:
 *
 *     struct gp_config c;
 *     struct gp_diag d;
 *     int rc = gp_config_load(&c, path_or_NULL, &d);
 *     for (i = 0; rc == GP_OK && i < nsets; i++)   // --set section.key=value
 *         rc = gp_config_set(&c, set_key[i], set_value[i], &d);
 *     if (rc == GP_OK)
 *         rc = gp_config_check(&c, &d);
 *     // on error: gp_diag_format(&d, rc, ...) says "FILE:LINE: ..." and,
 *     // when gp_config_load itself failed, there is nothing to fini
 *     ...
 *     gp_config_fini(&c);
 *
 * Units are in the field names: _us (int64 microseconds), _mib (MiB).
 * Every string of a loaded config is allocated, never NULL ("" = unset),
 * and owned by the struct: gp_config_fini frees them.
 */
#ifndef GPUPOOL_DAEMON_CONFIG_H
#define GPUPOOL_DAEMON_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpupool/base.h"
#include "gpupool/cluster.h"
#include "gpupool/core.h"
#include "gpupool/err.h"

/* [policy] holds at most this many keys. */
#define GP_CONFIG_POLICY_MAX 64
/* The longest line a config file may hold, and its largest size. */
#define GP_CONFIG_LINE_MAX 8192
#define GP_CONFIG_FILE_MAX (1 << 20)
/* The longest path after resolution (PATH_MAX less the NUL). */
#define GP_CONFIG_PATH_MAX 4095
/* [backend] gpus = auto */
#define GP_CONFIG_GPUS_AUTO (-1)

/* [store] synchronous: SQLite's PRAGMA synchronous for the store. */
enum gp_config_sync { GP_CONFIG_SYNC_FULL, GP_CONFIG_SYNC_NORMAL };

/* [backend] kind */
enum gp_config_backend { GP_CONFIG_BACKEND_LOCAL, GP_CONFIG_BACKEND_SLURM };

/* [monitor] nvml: auto = use NVML when libnvidia-ml.so.1 loads. */
enum gp_config_nvml {
    GP_CONFIG_NVML_AUTO,
    GP_CONFIG_NVML_ON,
    GP_CONFIG_NVML_OFF
};

struct gp_config__priv; /* where each value came from; private */

/* The effective configuration. Path fields hold absolute paths after
 * resolution (relative ones are taken relative to server.state_dir), or ""
 * where the key allows "unset". docs/config.md documents each key. */
struct gp_config {
    struct {
        char *state_dir;   /* absolute */
        char *socket;      /* the API's Unix socket */
        char *listen;      /* TCP "host:port"; "" = no TCP */
        char *tls_cert;    /* "" = none */
        char *tls_key;     /* "" = none */
        bool tls;          /* TCP needs tls_cert and tls_key unless false */
        char *tokens_file; /* bearer tokens */
        enum gp_log_level log_level;
        char *log_file; /* "" = stderr */
        int64_t max_body_mib;
    } server;
    struct {
        char *db;
        enum gp_config_sync synchronous;
        int64_t retention_us;        /* 0 = keep all history */
        int64_t sample_retention_us; /* 0 = keep all samples */
    } store;
    struct {
        char *policy; /* a name gp_policy_find knows */
        enum gp_place_model placement;
        char *tenants;           /* tenants JSON file; "" = one "default" */
        int64_t round_period_us; /* 0 = rounds on events only */
        int64_t grace_us;
        int64_t min_run_us;
        int64_t max_preemptions; /* 0 = no cap */
        int64_t usage_half_life_us;
        int64_t restart_cost_us;
    } scheduler;
    /* [policy]: every key of the section, in file order, for the policy to
     * validate; passes as gp_core_config.policy_opts / npolicy_opts. The
     * strings are the config's, valid until gp_config_fini. */
    struct {
        struct gp_kv opts[GP_CONFIG_POLICY_MAX];
        size_t n;
    } policy;
    struct {
        enum gp_config_backend kind;
        int64_t gpus;    /* GP_CONFIG_GPUS_AUTO, or a count of fake GPUs */
        char *gpu_type;  /* "" = what NVML reports */
        int64_t cpus;    /* 0 = this machine's */
        int64_t mem_mib; /* 0 = this machine's */
        char *job_dir;
        int preempt_signal; /* a signal number */
        int64_t kill_after_us;
        bool run_as_submitter;
    } backend;
    struct {
        char *bin_dir;   /* "" = PATH */
        char *partition; /* "" = the default; adopt from all */
        int64_t poll_us;
        int64_t busy_poll_us; /* jobs only, while a start or stop is due */
        int64_t timeout_us;
        bool adopt;
    } slurm;
    struct {
        int64_t period_us;
        enum gp_config_nvml nvml;
        int64_t idle_after_us; /* 0 = never report idle jobs */
        int64_t idle_util_pct;
        bool fake_busy;
    } monitor;
    struct {
        bool enabled;
    } metrics;
    struct gp_config__priv *priv_;
};

/* The defaults: every key at its documented default, paths resolved
 * (state_dir by the rule in docs/config.md: /var/lib/gpupool for root,
 * else $XDG_STATE_HOME/gpupool or ~/.local/state/gpupool). *c is treated
 * as uninitialized and written only on success. GP_ENOMEM; GP_EINVAL when
 * no state_dir can be found (no usable $HOME for a non-root user). */
int gp_config_defaults(struct gp_config *c, struct gp_diag *diag);

/* The defaults, then the INI file at path (NULL: none, the defaults
 * alone), then paths resolved. *c is treated as uninitialized and written
 * only on success, so a failed reload leaves the running config alone.
 * Errors name the place in diag->where ("gpupool.ini:12"):
 * GP_EPARSE - a line that is no [section], key = value or comment; an
 *             unknown section or key (only [policy] takes any key); a
 *             duplicate key; a value that is not of the key's type; a line
 *             longer than GP_CONFIG_LINE_MAX, a file larger than
 *             GP_CONFIG_FILE_MAX, a control character or NUL byte;
 * GP_ERANGE - a number outside the key's bounds (the message names them);
 *             a [policy] section with more than GP_CONFIG_POLICY_MAX keys;
 * GP_EIO    - the file cannot be opened or read (where = the path);
 * GP_ENOMEM, and gp_config_defaults' errors.
 * Cross-key rules are left to gp_config_check, so that --set may complete
 * what a file leaves out. */
int gp_config_load(struct gp_config *c, const char *path, struct gp_diag *diag);

/* gp_config_load on a file's text in memory (len bytes, NUL not needed);
 * name is what errors call the file. For tests and fuzzing. */
int gp_config_parse(struct gp_config *c, const char *name, const char *text,
                    size_t len, struct gp_diag *diag);

/* Set one key of a loaded config, as --set does: section_key is
 * "section.key" ("scheduler.policy", "policy.levels"), value is parsed
 * exactly like a file's (surrounding blanks ignored). A later set of the
 * same key wins; in [policy] it replaces the value in place or appends the
 * key. Setting server.state_dir moves every relative path with it. On error
 * (where = "--set section.key") *c is unchanged: GP_EPARSE, GP_ERANGE as
 * for a file, and for a value no file could hold (a control character, or
 * a ';' that a file would read as a comment); GP_ENOMEM. */
int gp_config_set(struct gp_config *c, const char *section_key,
                  const char *value, struct gp_diag *diag);

/* The rules between keys, to run once after the last gp_config_set: TCP
 * (server.listen) needs server.tls_cert and server.tls_key unless
 * server.tls = off; the socket's path fits a Unix socket address (107
 * bytes). GP_EINVAL with where naming the place the offending key was set
 * ("gpupool.ini:4", "--set server.listen", or "server.listen" for a
 * default). */
int gp_config_check(const struct gp_config *c, struct gp_diag *diag);

/* Free every string and the private part; c may then be loaded again.
 * Safe on a zeroed struct. */
void gp_config_fini(struct gp_config *c);

/* Write the effective config as an INI file that gp_config_load reads back
 * to an equal config (every key, [policy] in order, paths resolved).
 * GP_EIO when writing fails. */
int gp_config_dump(const struct gp_config *c, FILE *out);

/* Write docs/config.md, generated from the table (deterministic: nothing
 * of this machine's environment). GP_EIO when writing fails. */
int gp_config_write_doc(FILE *out);

/* Names ("section.key", static strings) of the keys whose values differ
 * between a and b, [policy] counting as one key "policy"; writes at most
 * max of them to names and returns how many differ. For logging what a
 * reload changes, and for tests. */
size_t gp_config_diff(const struct gp_config *a, const struct gp_config *b,
                      const char **names, size_t max);

/* Does a SIGHUP reload apply this key ("scheduler.tenants", anything in
 * [policy])? The others need a restart: the daemon logs that they changed
 * and keeps their old values. */
bool gp_config_is_reloadable(const char *section_key);

/* The state_dir rule, for tests: root ? "/var/lib/gpupool" :
 * "$xdg_state_home/gpupool" when xdg_state_home is absolute, else
 * "$home/.local/state/gpupool" when home is absolute; GP_EINVAL otherwise.
 * *out is allocated (free it). */
int gp__config_state_dir_rule(bool root, const char *xdg_state_home,
                              const char *home, char **out);

#endif
