/* db.c - the daemon's durable store on SQLite (db.h, docs/store.md).
 *
 * Key decision: the store is a log the loop writes before it acts, not a
 * cache it flushes now and then. So every statement is prepared once at
 * open and kept for the daemon's life, writes are only legal inside an
 * explicit transaction (the loop's group commit), and recovery is nothing
 * but reading the tables back.
 *
 * One connection, one thread, one process: an flock on the file keeps a
 * second daemon off the same store.
 */
#define _DEFAULT_SOURCE /* flock(2) */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "daemon/db.h"
#include "daemon/db_schema.h"

/* the strings of one gp_db_job_get: five texts of at most 1 MiB */
#define SCRATCH_CAP (8u * 1024 * 1024)
#define BUSY_TIMEOUT_MS 5000
/* the WAL is truncated to this after a checkpoint (SQLite lets it grow to
 * the largest transaction otherwise) */
#define WAL_LIMIT_BYTES (64 * 1024 * 1024)

#define JOB_COLS                                                               \
    "id, ext, tenant, user_name, uid, gid, name, spec_json, state, "           \
    "submit_us, queued_us, first_start_us, end_us, restarts, preemptions, "    \
    "exit_code, reason, gpu_us, work_done_us, predicted_us, updated_us"
#define RUN_COLS                                                               \
    "job_id, run, node, devices, milli, started_us, ended_us, end_reason, "    \
    "supervisor_pid, supervisor_start_ticks"
#define ACTION_COLS                                                            \
    "id, job_id, kind, at_us, deadline_us, reason, detail_json, done_us"
#define SAMPLE_COLS                                                            \
    "ts_us, node, gpu, util_pct, mem_used_mib, mem_total_mib, temp_c, power_w"
#define HISTORY_COLS "user_name, name, tenant, gpus, runtime_us, gpu_us, end_us"
/* Ended jobs to prune, oldest first. The state test repeats what end_us
 * says (writes keep them in step) so that no slip can delete a live job. */
#define PRUNE_JOBS                                                             \
    "(SELECT id FROM jobs WHERE end_us < ?1 AND state IN ('completed', "       \
    "'failed', 'cancelled', 'rejected') ORDER BY end_us, id LIMIT ?2)"

/* Every statement the store runs, prepared at open. */
#define STMT_LIST(X)                                                           \
    X(BEGIN, "BEGIN IMMEDIATE")                                                \
    X(COMMIT, "COMMIT")                                                        \
    X(ROLLBACK, "ROLLBACK")                                                    \
    X(SAVEPOINT, "SAVEPOINT gp_request")                                       \
    X(RELEASE, "RELEASE gp_request")                                           \
    X(ROLLBACK_TO, "ROLLBACK TO gp_request")                                   \
    X(JOB_INSERT,                                                              \
      "INSERT INTO jobs(ext, tenant, user_name, uid, gid, name, spec_json, "   \
      "state, submit_us, queued_us, first_start_us, end_us, restarts, "        \
      "preemptions, exit_code, reason, gpu_us, work_done_us, predicted_us, "   \
      "updated_us) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "     \
      "?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20)")                          \
    X(JOB_UPDATE,                                                              \
      "UPDATE jobs SET state = ?2, queued_us = ?3, first_start_us = ?4, "      \
      "end_us = ?5, restarts = ?6, preemptions = ?7, exit_code = ?8, "         \
      "reason = ?9, gpu_us = ?10, work_done_us = ?11, predicted_us = ?12, "    \
      "updated_us = ?13 WHERE id = ?1")                                        \
    X(JOB_GET, "SELECT " JOB_COLS " FROM jobs WHERE id = ?1")                  \
    X(JOB_FIND_EXT, "SELECT id FROM jobs WHERE ext = ?1")                      \
    X(JOBS_LIVE, "SELECT " JOB_COLS " FROM jobs WHERE end_us IS NULL AND "     \
                 "id > ?1 ORDER BY id LIMIT ?2")                               \
    X(JOBS_ENDED, "SELECT " JOB_COLS " FROM jobs WHERE end_us IS NOT NULL "    \
                  "AND id > ?1 ORDER BY id LIMIT ?2")                          \
    X(JOBS_ALL,                                                                \
      "SELECT " JOB_COLS " FROM jobs WHERE id > ?1 ORDER BY id LIMIT ?2")      \
    X(EVENT_NEXT_SEQ,                                                          \
      "SELECT coalesce(max(seq), 0) + 1 FROM job_events WHERE job_id = ?1")    \
    X(EVENT_APPEND,                                                            \
      "INSERT INTO job_events(job_id, seq, ts_us, kind, detail_json) "         \
      "VALUES (?1, ?2, ?3, ?4, ?5)")                                           \
    X(EVENTS_EACH, "SELECT job_id, seq, ts_us, kind, detail_json FROM "        \
                   "job_events WHERE job_id = ?1 ORDER BY seq")                \
    X(RUN_BEGIN,                                                               \
      "INSERT INTO runs(job_id, run, node, devices, milli, started_us, "       \
      "supervisor_pid, supervisor_start_ticks) SELECT ?1, "                    \
      "coalesce(max(run), 0) + 1, ?2, ?3, ?4, ?5, ?6, ?7 FROM runs WHERE "     \
      "job_id = ?1 RETURNING run")                                             \
    X(RUN_SUPERVISOR, "UPDATE runs SET supervisor_pid = ?3, "                  \
                      "supervisor_start_ticks = ?4 WHERE job_id = ?1 AND "     \
                      "run = ?2")                                              \
    X(RUN_END, "UPDATE runs SET ended_us = ?3, end_reason = ?4 WHERE "         \
               "job_id = ?1 AND run = ?2 AND ended_us IS NULL")                \
    X(RUN_IS_ENDED, "SELECT ended_us IS NOT NULL FROM runs WHERE job_id = ?1 " \
                    "AND run = ?2")                                            \
    X(RUNS_JOB,                                                                \
      "SELECT " RUN_COLS " FROM runs WHERE job_id = ?1 ORDER BY run")          \
    X(RUNS_JOB_OPEN, "SELECT " RUN_COLS " FROM runs WHERE job_id = ?1 AND "    \
                     "ended_us IS NULL ORDER BY run")                          \
    X(RUNS_ALL, "SELECT " RUN_COLS " FROM runs ORDER BY job_id, run")          \
    X(RUNS_ALL_OPEN, "SELECT " RUN_COLS " FROM runs WHERE ended_us IS NULL "   \
                     "ORDER BY job_id, run")                                   \
    X(ACTION_ADD, "INSERT INTO actions(job_id, kind, at_us, deadline_us, "     \
                  "reason, detail_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")      \
    X(ACTION_DONE, "UPDATE actions SET done_us = ?2 WHERE id = ?1 AND "        \
                   "done_us IS NULL")                                          \
    X(ACTION_IS_DONE, "SELECT done_us IS NOT NULL FROM actions WHERE id = ?1") \
    X(ACTIONS_UNDONE, "SELECT " ACTION_COLS " FROM actions WHERE done_us IS "  \
                      "NULL ORDER BY id")                                      \
    X(TENANT_UPSERT,                                                           \
      "INSERT INTO tenants(name, spec_json, created_us, updated_us) VALUES "   \
      "(?1, ?2, ?3, ?4) ON CONFLICT(name) DO UPDATE SET spec_json = "          \
      "excluded.spec_json, updated_us = excluded.updated_us")                  \
    X(TENANT_DELETE, "DELETE FROM tenants WHERE name = ?1")                    \
    X(TENANTS_EACH, "SELECT name, spec_json, created_us, updated_us FROM "     \
                    "tenants ORDER BY name")                                   \
    X(NODE_UPSERT,                                                             \
      "INSERT INTO nodes(name, spec_json, state, updated_us) VALUES (?1, ?2, " \
      "?3, ?4) ON CONFLICT(name) DO UPDATE SET spec_json = "                   \
      "excluded.spec_json, state = excluded.state, updated_us = "              \
      "excluded.updated_us")                                                   \
    X(NODE_DELETE, "DELETE FROM nodes WHERE name = ?1")                        \
    X(NODES_EACH, "SELECT name, spec_json, state, updated_us FROM nodes "      \
                  "ORDER BY name")                                             \
    X(SAMPLE_ADD, "INSERT INTO gpu_samples(" SAMPLE_COLS ") VALUES (?1, ?2, "  \
                  "?3, ?4, ?5, ?6, ?7, ?8)")                                   \
    X(SAMPLES_EACH, "SELECT " SAMPLE_COLS " FROM gpu_samples WHERE ts_us >= "  \
                    "?1 AND ts_us < ?2 ORDER BY ts_us, rowid")                 \
    X(HISTORY_ADD, "INSERT INTO history(" HISTORY_COLS ") VALUES (?1, ?2, "    \
                   "?3, ?4, ?5, ?6, ?7)")                                      \
    X(HISTORY_EACH, "SELECT " HISTORY_COLS " FROM history WHERE end_us >= ?1 " \
                    "ORDER BY end_us, rowid")                                  \
    X(USAGE_SAVE,                                                              \
      "INSERT INTO usage(tenant, decayed_gpu_us, at_us) VALUES (?1, ?2, ?3) "  \
      "ON CONFLICT(tenant) DO UPDATE SET decayed_gpu_us = "                    \
      "excluded.decayed_gpu_us, at_us = excluded.at_us")                       \
    X(USAGE_EACH,                                                              \
      "SELECT tenant, decayed_gpu_us, at_us FROM usage ORDER BY tenant")       \
    X(META_GET, "SELECT value FROM meta WHERE key = ?1")                       \
    X(META_SET, "INSERT INTO meta(key, value) VALUES (?1, ?2) ON "             \
                "CONFLICT(key) DO UPDATE SET value = excluded.value")          \
    X(PRUNE_EVENTS, "DELETE FROM job_events WHERE job_id IN " PRUNE_JOBS)      \
    X(PRUNE_RUNS, "DELETE FROM runs WHERE job_id IN " PRUNE_JOBS)              \
    X(PRUNE_JOB_ACTIONS, "DELETE FROM actions WHERE job_id IN " PRUNE_JOBS)    \
    X(PRUNE_JOBS, "DELETE FROM jobs WHERE id IN " PRUNE_JOBS)                  \
    X(PRUNE_DONE_ACTIONS,                                                      \
      "DELETE FROM actions WHERE id IN (SELECT id FROM actions WHERE "         \
      "done_us < ?1 ORDER BY done_us LIMIT ?2)")                               \
    X(PRUNE_SAMPLES,                                                           \
      "DELETE FROM gpu_samples WHERE rowid IN (SELECT rowid FROM "             \
      "gpu_samples WHERE ts_us < ?1 ORDER BY ts_us LIMIT ?2)")                 \
    X(PRUNE_HISTORY,                                                           \
      "DELETE FROM history WHERE rowid IN (SELECT rowid FROM history WHERE "   \
      "end_us < ?1 ORDER BY end_us LIMIT ?2)")

enum stmt_id {
#define X(name, sql) ST_##name,
    STMT_LIST(X)
#undef X
        NSTMT
};

static const char *const stmt_sql[NSTMT] = {
#define X(name, sql) sql,
    STMT_LIST(X)
#undef X
};

static const char *const stmt_name[NSTMT] = {
#define X(name, sql) #name,
    STMT_LIST(X)
#undef X
};

struct gp_db {
    sqlite3 *sql;
    sqlite3_stmt *st[NSTMT];
    char *path;
    int lock_fd;
    bool ready;        /* opened, migrated, statements prepared */
    bool in_txn;       /* gp_db_begin succeeded, no commit/rollback yet */
    bool in_savepoint; /* gp_db_savepoint set, not released */
    unsigned iterating;
    struct gp_arena scratch; /* the strings of gp_db_job_get */
    const struct gp_env *env;
};

/* ---- errors ---------------------------------------------------------- */

static int map_rc(int rc)
{
    switch (rc) {
    case SQLITE_CONSTRAINT_UNIQUE:
    case SQLITE_CONSTRAINT_PRIMARYKEY:
        return GP_EEXIST;
    case SQLITE_CONSTRAINT_FOREIGNKEY:
        return GP_ENOENT;
    case SQLITE_CONSTRAINT_NOTNULL:
    case SQLITE_CONSTRAINT_DATATYPE:
    case SQLITE_CONSTRAINT_CHECK:
        return GP_EINVAL;
    default:
        break;
    }
    switch (rc & 0xff) {
    case SQLITE_NOMEM:
        return GP_ENOMEM;
    case SQLITE_TOOBIG:
        return GP_ERANGE;
    default:
        return GP_EIO;
    }
}

/* Fill diag with "<what>: <SQLite's message>" for SQLite's code rc. Call
 * before the statement is reset: the message is the connection's last. */
static int vfail(struct gp_db *db, struct gp_diag *diag, int rc,
                 const char *fmt, va_list ap)
{
    char what[160];

    if (!diag)
        return map_rc(rc);
    vsnprintf(what, sizeof(what), fmt, ap);
    return gp_diag_set(diag, map_rc(rc), db->path, "%s: %s", what,
                       db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc));
}

static int sql_fail(struct gp_db *db, struct gp_diag *diag, int rc,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int sql_fail(struct gp_db *db, struct gp_diag *diag, int rc,
                    const char *fmt, ...)
{
    va_list ap;
    int err;

    va_start(ap, fmt);
    err = vfail(db, diag, rc, fmt, ap);
    va_end(ap);
    return err;
}

/* A string argument: required ones must be there and not empty; none may
 * be longer than GP_DB_TEXT_MAX. */
static int check_text(struct gp_db *db, struct gp_diag *diag, const char *what,
                      const char *field, const char *s, bool required)
{
    if (!s || !*s) {
        if (required)
            return gp_diag_set(diag, GP_EINVAL, db->path, "%s: %s is missing",
                               what, field);
        return GP_OK;
    }
    if (strnlen(s, GP_DB_TEXT_MAX + 1) > GP_DB_TEXT_MAX)
        return gp_diag_set(diag, GP_ERANGE, db->path,
                           "%s: %s is longer than %d bytes", what, field,
                           GP_DB_TEXT_MAX);
    return GP_OK;
}

/* A write may run: in a transaction that is still open, not from inside
 * an iteration. */
static int writable(struct gp_db *db, struct gp_diag *diag, const char *what)
{
    if (db->iterating)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "%s: a write from inside an iteration", what);
    if (!db->in_txn)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "%s: outside a transaction (gp_db_begin first)",
                           what);
    if (sqlite3_get_autocommit(db->sql))
        return gp_diag_set(diag, GP_EIO, db->path,
                           "%s: the transaction was rolled back by an earlier "
                           "error",
                           what);
    return GP_OK;
}

/* A statement that is not in the middle of an iteration already. */
static int stmt(struct gp_db *db, enum stmt_id id, sqlite3_stmt **out,
                struct gp_diag *diag, const char *what)
{
    *out = db->st[id];
    if (sqlite3_stmt_busy(db->st[id]))
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "%s: called again from inside its own iteration",
                           what);
    return GP_OK;
}

static void done_with(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* ---- binding and reading values -------------------------------------- */

/* Bindings keep the first error, checked once before the step. Strings
 * are bound SQLITE_STATIC: every statement is stepped and reset before
 * the function that bound it returns. */
struct bind {
    sqlite3_stmt *st;
    int rc;
};

static void b_text(struct bind *b, int i, const char *s)
{
    if (b->rc == SQLITE_OK)
        b->rc = s ? sqlite3_bind_text(b->st, i, s, -1, SQLITE_STATIC)
                  : sqlite3_bind_null(b->st, i);
}

static void b_i64(struct bind *b, int i, int64_t v)
{
    if (b->rc == SQLITE_OK)
        b->rc = sqlite3_bind_int64(b->st, i, v);
}

/* GP_TIME_NONE is NULL */
static void b_time(struct bind *b, int i, int64_t t)
{
    if (b->rc == SQLITE_OK)
        b->rc = t == GP_TIME_NONE ? sqlite3_bind_null(b->st, i)
                                  : sqlite3_bind_int64(b->st, i, t);
}

/* NaN (unknown) is NULL */
static void b_double(struct bind *b, int i, double v)
{
    if (b->rc == SQLITE_OK)
        b->rc = isnan(v) ? sqlite3_bind_null(b->st, i)
                         : sqlite3_bind_double(b->st, i, v);
}

/* UINT64_MAX (unknown) is NULL */
static void b_u64_or_null(struct bind *b, int i, uint64_t v)
{
    if (b->rc == SQLITE_OK)
        b->rc = v > (uint64_t)INT64_MAX
                    ? sqlite3_bind_null(b->st, i)
                    : sqlite3_bind_int64(b->st, i, (int64_t)v);
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return NULL;
    return (const char *)sqlite3_column_text(st, i);
}

/* a NOT NULL text column; "" should SQLite fail to give it */
static const char *col_str(sqlite3_stmt *st, int i)
{
    const char *s = col_text(st, i);

    return s ? s : "";
}

static int64_t col_time(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return GP_TIME_NONE;
    return sqlite3_column_int64(st, i);
}

static double col_double(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return NAN;
    return sqlite3_column_double(st, i);
}

static uint64_t col_u64_or_max(sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return UINT64_MAX;
    return (uint64_t)sqlite3_column_int64(st, i);
}

/* ---- running statements ------------------------------------------------ */

/* Step a bound write to its end and reset it. With RETURNING, the first
 * row's first column goes to *returned (may be NULL). On failure diag
 * says "<fmt...>: <SQLite's message>". */
static int step_write(struct gp_db *db, struct bind *b, int64_t *returned,
                      struct gp_diag *diag, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int step_write(struct gp_db *db, struct bind *b, int64_t *returned,
                      struct gp_diag *diag, const char *fmt, ...)
{
    int rc = b->rc, err = GP_OK;
    va_list ap;

    if (rc == SQLITE_OK) {
        rc = sqlite3_step(b->st);
        if (rc == SQLITE_ROW) {
            if (returned)
                *returned = sqlite3_column_int64(b->st, 0);
            rc = sqlite3_step(b->st);
        }
    }
    if (rc != SQLITE_DONE && rc != SQLITE_OK) {
        va_start(ap, fmt);
        err = vfail(db, diag, rc, fmt, ap);
        va_end(ap);
    }
    done_with(b->st);
    return err;
}

/* Step a bound query for at most one row: GP_OK with *found, the row
 * left for the caller to read (then done_with), or an error (reset). */
static int step_one(struct gp_db *db, struct bind *b, bool *found,
                    struct gp_diag *diag, const char *what)
{
    int rc = b->rc;

    *found = false;
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(b->st);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
            *found = rc == SQLITE_ROW;
            return GP_OK;
        }
    }
    rc = sql_fail(db, diag, rc, "%s", what);
    done_with(b->st);
    return rc;
}

/* The callback of an iteration, whichever its record. */
union each_fn {
    int (*job)(void *priv, const struct gp_db_job *job);
    int (*event)(void *priv, const struct gp_db_event *ev);
    int (*run)(void *priv, const struct gp_db_run *r);
    int (*action)(void *priv, const struct gp_db_action *a);
    int (*tenant)(void *priv, const struct gp_db_tenant *t);
    int (*node)(void *priv, const struct gp_db_node *n);
    int (*sample)(void *priv, const struct gp_db_gpu_sample *s);
    int (*history)(void *priv, const struct gp_db_history *h);
    int (*usage)(void *priv, const struct gp_db_usage *u);
};

struct each {
    struct gp_db *db;
    union each_fn fn;
    void *priv;
    struct gp_diag *diag;
};

/* Step a bound query, calling row() for each row; row returns non-zero to
 * stop, and that value is returned. Writes are refused meanwhile. */
static int iterate(struct each *e, struct bind *b,
                   int (*row)(struct each *e, sqlite3_stmt *st),
                   const char *what)
{
    struct gp_db *db = e->db;
    int rc = b->rc, ret = 0;

    if (rc == SQLITE_OK) {
        db->iterating++;
        while ((rc = sqlite3_step(b->st)) == SQLITE_ROW)
            if ((ret = row(e, b->st)) != 0)
                break;
        db->iterating--;
    }
    if (ret == 0 && rc != SQLITE_DONE)
        ret = sql_fail(db, e->diag, rc, "%s", what);
    done_with(b->st);
    return ret;
}

/* ---- opening ------------------------------------------------------------- */

static int sys_fail(struct gp_db *db, struct gp_diag *diag, const char *what,
                    const char *name)
{
    return gp_diag_set(diag, GP_EIO, db->path, "%s %s: %s", what, name,
                       strerror(errno));
}

/* mkdir -p of the folders above the store (mode 0700). */
static int make_parents(struct gp_db *db, struct gp_diag *diag)
{
    char buf[PATH_MAX];
    char *p;

    snprintf(buf, sizeof(buf), "%s", db->path);
    for (p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return sys_fail(db, diag, "create folder", buf);
        *p = '/';
    }
    return GP_OK;
}

/* Create the file ourselves, for its mode (SQLite would make it 0644),
 * and hold an flock on it for as long as the store is open, so that a
 * second daemon (or a second gp_db here) is refused. flock and SQLite's
 * fcntl locks do not interact on local file systems; this descriptor is
 * closed only after SQLite closed the file, so closing it cannot drop
 * SQLite's locks either. */
static int open_and_lock(struct gp_db *db, struct gp_diag *diag)
{
    db->lock_fd = open(db->path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (db->lock_fd < 0)
        return sys_fail(db, diag, "open", db->path);
    if (flock(db->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return gp_diag_set(diag, GP_ESTATE, db->path,
                               "the store is in use by another daemon");
        return sys_fail(db, diag, "lock", db->path);
    }
    return GP_OK;
}

/* The first column of the first row of sql (a PRAGMA), as an integer, or
 * as text into buf when buf is not NULL. */
static int pragma_value(struct gp_db *db, const char *sql, int64_t *value,
                        char *buf, size_t len, struct gp_diag *diag)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);

    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (value)
            *value = sqlite3_column_int64(st, 0);
        if (buf)
            snprintf(buf, len, "%s", col_str(st, 0));
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        if (buf)
            buf[0] = '\0';
        if (value)
            *value = 0;
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_OK) {
        if ((rc & 0xff) == SQLITE_NOTADB)
            rc =
                gp_diag_set(diag, GP_EINVAL, db->path,
                            "not a gpupool store: %s", sqlite3_errmsg(db->sql));
        else
            rc = sql_fail(db, diag, rc, "%s", sql);
    }
    sqlite3_finalize(st);
    return rc;
}

static int exec(struct gp_db *db, const char *sql, struct gp_diag *diag,
                const char *what)
{
    int rc = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);

    return rc == SQLITE_OK ? GP_OK : sql_fail(db, diag, rc, "%s", what);
}

/* What the file is: a new store (version 0), a gpupool store of a version
 * this build can open, or something to leave alone. */
static int identify(struct gp_db *db, int64_t *version, struct gp_diag *diag)
{
    int64_t app, ver, nobj;
    int rc;

    if ((rc = pragma_value(db, "PRAGMA application_id", &app, NULL, 0, diag)) !=
            GP_OK ||
        (rc = pragma_value(db, "PRAGMA user_version", &ver, NULL, 0, diag)) !=
            GP_OK ||
        (rc = pragma_value(db, "SELECT count(*) FROM sqlite_master", &nobj,
                           NULL, 0, diag)) != GP_OK)
        return rc;
    if (app == 0 && ver == 0 && nobj == 0) {
        *version = 0;
        return GP_OK;
    }
    if (app != GP_DB_APPLICATION_ID)
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "not a gpupool store: an SQLite database of "
                           "another application (application_id 0x%08" PRIx32
                           ", %" PRId64 " tables and indexes)",
                           (uint32_t)app, nobj);
    if (ver > (int64_t)gp__db_nmigrations)
        return gp_diag_set(diag, GP_ERANGE, db->path,
                           "the store was written by a newer gpupool: its "
                           "schema is version %" PRId64
                           ", this gpupool knows versions up to %zu",
                           ver, gp__db_nmigrations);
    if (ver < 0)
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "not a gpupool store: schema version %" PRId64, ver);
    *version = ver;
    return GP_OK;
}

/* Bring the store to the current version, one migration per transaction.
 * The version is read again inside each transaction: what counts is what
 * the file says once we hold its write lock. */
static int migrate(struct gp_db *db, int64_t from, struct gp_diag *diag)
{
    char sql[96];
    int rc;

    for (;;) {
        int64_t v;

        if ((rc = exec(db, "BEGIN IMMEDIATE", diag, "begin a migration")) !=
            GP_OK)
            return rc;
        if ((rc = pragma_value(db, "PRAGMA user_version", &v, NULL, 0, diag)) !=
            GP_OK)
            goto fail;
        if (v >= (int64_t)gp__db_nmigrations)
            break;
        rc = sqlite3_exec(db->sql, gp__db_migrations[v], NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            rc = sql_fail(db, diag, rc, "migrate to version %" PRId64, v + 1);
            goto fail;
        }
        snprintf(sql, sizeof(sql), "PRAGMA user_version = %" PRId64, v + 1);
        if ((rc = exec(db, sql, diag, "set the schema version")) != GP_OK)
            goto fail;
        if (v == 0) {
            snprintf(sql, sizeof(sql), "PRAGMA application_id = %" PRId32,
                     (int32_t)GP_DB_APPLICATION_ID);
            if ((rc = exec(db, sql, diag, "set the application id")) != GP_OK)
                goto fail;
        }
        if ((rc = exec(db, "COMMIT", diag, "commit a migration")) != GP_OK)
            goto fail;
    }
    if ((rc = exec(db, "COMMIT", diag, "end the migrations")) != GP_OK)
        goto fail;
    if (from == 0)
        gp_logf(db->env, GP_LOG_INFO, "store %s created (version %zu)",
                db->path, gp__db_nmigrations);
    else if (from < (int64_t)gp__db_nmigrations)
        gp_logf(db->env, GP_LOG_INFO,
                "store %s migrated from version %" PRId64 " to %zu", db->path,
                from, gp__db_nmigrations);
    return GP_OK;
fail:
    if (!sqlite3_get_autocommit(db->sql))
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int configure(struct gp_db *db, const struct gp_db_options *o,
                     struct gp_diag *diag)
{
    char mode[16], sql[64];
    int rc;

    if ((rc = pragma_value(db, "PRAGMA journal_mode = WAL", NULL, mode,
                           sizeof(mode), diag)) != GP_OK)
        return rc;
    if (strcmp(mode, "wal") != 0)
        return gp_diag_set(diag, GP_EIO, db->path,
                           "cannot use WAL here (journal mode '%s'): a "
                           "network or read-only file system?",
                           mode);
    if ((rc = exec(db,
                   o->sync == GP_DB_SYNC_NORMAL ? "PRAGMA synchronous = NORMAL"
                                                : "PRAGMA synchronous = FULL",
                   diag, "set synchronous")) != GP_OK)
        return rc;
    snprintf(sql, sizeof(sql), "PRAGMA journal_size_limit = %d",
             WAL_LIMIT_BYTES);
    if ((rc = exec(db, sql, diag, "set journal_size_limit")) != GP_OK)
        return rc;
    return GP_OK;
}

static int enable_foreign_keys(struct gp_db *db, struct gp_diag *diag)
{
    int64_t on;
    int rc;

    if ((rc = exec(db, "PRAGMA foreign_keys = ON", diag,
                   "enable foreign keys")) != GP_OK ||
        (rc = pragma_value(db, "PRAGMA foreign_keys", &on, NULL, 0, diag)) !=
            GP_OK)
        return rc;
    if (on != 1)
        return gp_diag_set(diag, GP_EIO, db->path,
                           "this SQLite has no foreign keys: the store needs "
                           "them");
    return GP_OK;
}

uint32_t gp_db_schema_version(void)
{
    return (uint32_t)gp__db_nmigrations;
}

int gp_db_open(struct gp_db **out, const char *path,
               const struct gp_db_options *o, struct gp_diag *diag)
{
    static const struct gp_db_options defaults = {0};
    struct gp_db *db;
    int64_t version = 0;
    int rc;

    if (!o)
        o = &defaults;
    if (!out || !path || !*path)
        return gp_diag_set(diag, GP_EINVAL, "store",
                           "no path given for the store");
    if (strlen(path) >= PATH_MAX)
        return gp_diag_set(diag, GP_ERANGE, "store",
                           "the store's path is longer than %d bytes",
                           PATH_MAX - 1);
    if (o->sync != GP_DB_SYNC_FULL && o->sync != GP_DB_SYNC_NORMAL)
        return gp_diag_set(diag, GP_EINVAL, path,
                           "synchronous mode %d is neither FULL nor NORMAL",
                           (int)o->sync);
    if (!(db = calloc(1, sizeof(*db))))
        return gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
    db->lock_fd = -1;
    db->env = o->env;
    gp_arena_init(&db->scratch, SCRATCH_CAP);
    if (!(db->path = strdup(path))) {
        rc = gp_diag_set(diag, GP_ENOMEM, path, "out of memory");
        goto fail;
    }
    if ((rc = make_parents(db, diag)) != GP_OK ||
        (rc = open_and_lock(db, diag)) != GP_OK)
        goto fail;
    rc = sqlite3_open_v2(path, &db->sql,
                         SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
    if (rc != SQLITE_OK) {
        rc = sql_fail(db, diag, rc, "open");
        goto fail;
    }
    sqlite3_extended_result_codes(db->sql, 1);
    sqlite3_busy_timeout(
        db->sql,
        o->busy_timeout_ms
            ? (int)(o->busy_timeout_ms > INT_MAX ? INT_MAX : o->busy_timeout_ms)
            : BUSY_TIMEOUT_MS);
    if ((rc = identify(db, &version, diag)) != GP_OK ||
        (rc = configure(db, o, diag)) != GP_OK ||
        (rc = migrate(db, version, diag)) != GP_OK ||
        (rc = enable_foreign_keys(db, diag)) != GP_OK)
        goto fail;
    for (int i = 0; i < NSTMT; i++) {
        rc = sqlite3_prepare_v3(db->sql, stmt_sql[i], -1,
                                SQLITE_PREPARE_PERSISTENT, &db->st[i], NULL);
        if (rc != SQLITE_OK) {
            rc = sql_fail(db, diag, rc, "prepare statement %s", stmt_name[i]);
            goto fail;
        }
    }
    db->ready = true;
    *out = db;
    return GP_OK;
fail:
    gp_db_close(db);
    return rc;
}

void gp_db_close(struct gp_db *db)
{
    if (!db)
        return;
    if (db->sql) {
        if (!sqlite3_get_autocommit(db->sql))
            sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
        for (int i = 0; i < NSTMT; i++)
            sqlite3_finalize(db->st[i]);
        if (db->ready)
            sqlite3_exec(db->sql, "PRAGMA optimize", NULL, NULL, NULL);
        sqlite3_close_v2(db->sql);
    }
    /* after SQLite let go of the file: the next holder finds it closed */
    if (db->lock_fd >= 0)
        close(db->lock_fd);
    gp_arena_fini(&db->scratch);
    free(db->path);
    free(db);
}

const char *gp_db_path(const struct gp_db *db)
{
    return db->path;
}

/* ---- transactions --------------------------------------------------- */

static int run_simple(struct gp_db *db, enum stmt_id id, struct gp_diag *diag,
                      const char *what)
{
    struct bind b = {db->st[id], SQLITE_OK};

    return step_write(db, &b, NULL, diag, "%s", what);
}

/* SQLite rolled the transaction back on its own (a full disk, an i/o
 * error): forget ours. */
static bool txn_lost(struct gp_db *db)
{
    if (db->in_txn && sqlite3_get_autocommit(db->sql)) {
        db->in_txn = false;
        db->in_savepoint = false;
        return true;
    }
    return false;
}

int gp_db_begin(struct gp_db *db, struct gp_diag *diag)
{
    int rc;

    txn_lost(db);
    if (db->in_txn)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "begin: a transaction is open already");
    if (db->iterating)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "begin: from inside an iteration");
    if ((rc = run_simple(db, ST_BEGIN, diag, "begin")) != GP_OK)
        return rc;
    db->in_txn = true;
    db->in_savepoint = false;
    return GP_OK;
}

int gp_db_commit(struct gp_db *db, struct gp_diag *diag)
{
    int rc;

    if (txn_lost(db))
        return gp_diag_set(diag, GP_EIO, db->path,
                           "commit: the transaction was rolled back by an "
                           "earlier error; nothing of it was committed");
    if (!db->in_txn)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "commit: no transaction is open");
    if (db->iterating)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "commit: from inside an iteration");
    rc = run_simple(db, ST_COMMIT, diag, "commit");
    if (rc != GP_OK && !sqlite3_get_autocommit(db->sql))
        sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    db->in_txn = false;
    db->in_savepoint = false;
    return rc;
}

int gp_db_rollback(struct gp_db *db, struct gp_diag *diag)
{
    int rc = GP_OK;

    if (txn_lost(db))
        return GP_OK; /* rolled back already */
    if (!db->in_txn)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "rollback: no transaction is open");
    if (db->iterating)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "rollback: from inside an iteration");
    rc = run_simple(db, ST_ROLLBACK, diag, "rollback");
    if (rc == GP_OK || sqlite3_get_autocommit(db->sql)) {
        db->in_txn = false;
        db->in_savepoint = false;
    }
    return rc;
}

bool gp_db_in_transaction(const struct gp_db *db)
{
    return db->in_txn && !sqlite3_get_autocommit(db->sql);
}

int gp_db_savepoint(struct gp_db *db, struct gp_diag *diag)
{
    int rc;

    if ((rc = writable(db, diag, "savepoint")) != GP_OK)
        return rc;
    if (db->in_savepoint)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "savepoint: one is set already");
    if ((rc = run_simple(db, ST_SAVEPOINT, diag, "savepoint")) != GP_OK)
        return rc;
    db->in_savepoint = true;
    return GP_OK;
}

int gp_db_savepoint_release(struct gp_db *db, struct gp_diag *diag)
{
    int rc;

    if ((rc = writable(db, diag, "release savepoint")) != GP_OK)
        return rc;
    if (!db->in_savepoint)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "release savepoint: none is set");
    if ((rc = run_simple(db, ST_RELEASE, diag, "release savepoint")) != GP_OK)
        return rc;
    db->in_savepoint = false;
    return GP_OK;
}

int gp_db_savepoint_rollback(struct gp_db *db, struct gp_diag *diag)
{
    int rc;

    if ((rc = writable(db, diag, "roll back to savepoint")) != GP_OK)
        return rc;
    if (!db->in_savepoint)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "roll back to savepoint: none is set");
    if ((rc = run_simple(db, ST_ROLLBACK_TO, diag, "roll back to savepoint")) !=
            GP_OK ||
        (rc = run_simple(db, ST_RELEASE, diag, "release savepoint")) != GP_OK)
        return rc;
    db->in_savepoint = false;
    return GP_OK;
}

/* ---- jobs ------------------------------------------------------------ */

static bool state_is_terminal(enum gp_job_state s)
{
    return s >= GP_JOB_COMPLETED;
}

static int state_parse(const char *s, enum gp_job_state *out)
{
    for (int i = GP_JOB_PENDING; i <= GP_JOB_REJECTED; i++) {
        if (strcmp(s, gp_job_state_name((enum gp_job_state)i)) == 0) {
            *out = (enum gp_job_state)i;
            return GP_OK;
        }
    }
    return GP_EPARSE;
}

/* The mutable fields, checked alike by insert and update. */
static int check_job_state(struct gp_db *db, const struct gp_db_job *j,
                           const char *what, struct gp_diag *diag)
{
    if ((unsigned)j->state > GP_JOB_REJECTED)
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "%s: state %d is not a job state", what,
                           (int)j->state);
    if (state_is_terminal(j->state) != (j->end_us != GP_TIME_NONE))
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "%s: state %s with end_us %" PRId64
                           ": a job is ended (end_us set) exactly when its "
                           "state is terminal",
                           what, gp_job_state_name(j->state), j->end_us);
    return check_text(db, diag, what, "reason", j->reason, false);
}

int gp_db_job_insert(struct gp_db *db, const struct gp_db_job *job, int64_t *id,
                     struct gp_diag *diag)
{
    const char *what = "insert job";
    const char *ext;
    struct bind b = {db->st[ST_JOB_INSERT], SQLITE_OK};
    int rc;

    if (!job)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no job", what);
    ext = job->ext && *job->ext ? job->ext : NULL;
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "ext", ext, false)) != GP_OK ||
        (rc = check_text(db, diag, what, "tenant", job->tenant, true)) !=
            GP_OK ||
        (rc = check_text(db, diag, what, "user", job->user, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "name", job->name, false)) != GP_OK ||
        (rc = check_text(db, diag, what, "spec_json", job->spec_json, true)) !=
            GP_OK ||
        (rc = check_job_state(db, job, what, diag)) != GP_OK)
        return rc;
    if (job->submit_us < 0)
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "%s: submit_us %" PRId64 " is negative", what,
                           job->submit_us);
    b_text(&b, 1, ext);
    b_text(&b, 2, job->tenant);
    b_text(&b, 3, job->user);
    b_i64(&b, 4, job->uid);
    b_i64(&b, 5, job->gid);
    b_text(&b, 6, job->name ? job->name : "");
    b_text(&b, 7, job->spec_json);
    b_text(&b, 8, gp_job_state_name(job->state));
    b_i64(&b, 9, job->submit_us);
    b_time(&b, 10, job->queued_us);
    b_time(&b, 11, job->first_start_us);
    b_time(&b, 12, job->end_us);
    b_i64(&b, 13, job->restarts);
    b_i64(&b, 14, job->preemptions);
    if (job->exit_code == GP_DB_NO_EXIT)
        b_text(&b, 15, NULL);
    else
        b_i64(&b, 15, job->exit_code);
    b_text(&b, 16, job->reason);
    b_i64(&b, 17, job->gpu_us);
    b_i64(&b, 18, job->work_done_us);
    b_i64(&b, 19, job->predicted_us);
    b_i64(&b, 20, job->updated_us);
    if ((rc = step_write(db, &b, NULL, diag, "insert job (ext %s)",
                         ext ? ext : "none")) != GP_OK)
        return rc;
    if (id)
        *id = sqlite3_last_insert_rowid(db->sql);
    return GP_OK;
}

int gp_db_job_update(struct gp_db *db, const struct gp_db_job *job,
                     struct gp_diag *diag)
{
    char what[48];
    struct bind b = {db->st[ST_JOB_UPDATE], SQLITE_OK};
    int rc;

    if (!job)
        return gp_diag_set(diag, GP_EINVAL, db->path, "update job: no job");
    snprintf(what, sizeof(what), "update job %" PRId64, job->id);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_job_state(db, job, what, diag)) != GP_OK)
        return rc;
    b_i64(&b, 1, job->id);
    b_text(&b, 2, gp_job_state_name(job->state));
    b_time(&b, 3, job->queued_us);
    b_time(&b, 4, job->first_start_us);
    b_time(&b, 5, job->end_us);
    b_i64(&b, 6, job->restarts);
    b_i64(&b, 7, job->preemptions);
    if (job->exit_code == GP_DB_NO_EXIT)
        b_text(&b, 8, NULL);
    else
        b_i64(&b, 8, job->exit_code);
    b_text(&b, 9, job->reason);
    b_i64(&b, 10, job->gpu_us);
    b_i64(&b, 11, job->work_done_us);
    b_i64(&b, 12, job->predicted_us);
    b_i64(&b, 13, job->updated_us);
    if ((rc = step_write(db, &b, NULL, diag, "%s", what)) != GP_OK)
        return rc;
    if (sqlite3_changes(db->sql) == 0)
        return gp_diag_set(diag, GP_ENOENT, db->path, "%s: no such job", what);
    return GP_OK;
}

/* A jobs row (JOB_COLS) into *j; strings point into the statement. */
static int job_decode(struct gp_db *db, sqlite3_stmt *st, struct gp_db_job *j,
                      struct gp_diag *diag)
{
    const char *state = col_str(st, 8);

    memset(j, 0, sizeof(*j));
    j->id = sqlite3_column_int64(st, 0);
    j->ext = col_text(st, 1);
    j->tenant = col_str(st, 2);
    j->user = col_str(st, 3);
    j->uid = (uint32_t)sqlite3_column_int64(st, 4);
    j->gid = (uint32_t)sqlite3_column_int64(st, 5);
    j->name = col_str(st, 6);
    j->spec_json = col_str(st, 7);
    if (state_parse(state, &j->state) != GP_OK)
        return gp_diag_set(diag, GP_EPARSE, db->path,
                           "job %" PRId64 ": unknown state '%s'", j->id, state);
    j->submit_us = sqlite3_column_int64(st, 9);
    j->queued_us = col_time(st, 10);
    j->first_start_us = col_time(st, 11);
    j->end_us = col_time(st, 12);
    j->restarts = (uint32_t)sqlite3_column_int64(st, 13);
    j->preemptions = (uint32_t)sqlite3_column_int64(st, 14);
    j->exit_code = sqlite3_column_type(st, 15) == SQLITE_NULL
                       ? GP_DB_NO_EXIT
                       : (int32_t)sqlite3_column_int64(st, 15);
    j->reason = col_text(st, 16);
    j->gpu_us = sqlite3_column_int64(st, 17);
    j->work_done_us = sqlite3_column_int64(st, 18);
    j->predicted_us = sqlite3_column_int64(st, 19);
    j->updated_us = sqlite3_column_int64(st, 20);
    return GP_OK;
}

/* Copy *s into the scratch arena (NULL stays NULL). */
static int keep_str(struct gp_db *db, const char **s)
{
    size_t n;
    char *p;

    if (!*s)
        return GP_OK;
    n = strlen(*s);
    if (!(p = gp_arena_alloc(&db->scratch, n + 1)))
        return GP_ENOMEM;
    memcpy(p, *s, n + 1);
    *s = p;
    return GP_OK;
}

int gp_db_job_get(struct gp_db *db, int64_t id, struct gp_db_job *out,
                  struct gp_diag *diag)
{
    char what[48];
    struct gp_db_job j;
    struct bind b;
    bool found;
    int rc;

    snprintf(what, sizeof(what), "get job %" PRId64, id);
    if ((rc = stmt(db, ST_JOB_GET, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_i64(&b, 1, id);
    if ((rc = step_one(db, &b, &found, diag, what)) != GP_OK)
        return rc;
    if (!found) {
        rc = gp_diag_set(diag, GP_ENOENT, db->path, "%s: no such job", what);
        goto fail;
    }
    if ((rc = job_decode(db, b.st, &j, diag)) != GP_OK)
        goto fail;
    gp_arena_reset(&db->scratch);
    if (keep_str(db, &j.ext) || keep_str(db, &j.tenant) ||
        keep_str(db, &j.user) || keep_str(db, &j.name) ||
        keep_str(db, &j.spec_json) || keep_str(db, &j.reason)) {
        rc = gp_diag_set(diag, GP_ENOMEM, db->path, "%s: out of memory", what);
        goto fail;
    }
    *out = j;
fail:
    done_with(b.st);
    return rc;
}

int gp_db_job_find_ext(struct gp_db *db, const char *ext, int64_t *id,
                       struct gp_diag *diag)
{
    const char *what = "find job by ext";
    struct bind b;
    bool found;
    int rc;

    if ((rc = check_text(db, diag, what, "ext", ext, true)) != GP_OK ||
        (rc = stmt(db, ST_JOB_FIND_EXT, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_text(&b, 1, ext);
    if ((rc = step_one(db, &b, &found, diag, what)) != GP_OK)
        return rc;
    if (found)
        *id = sqlite3_column_int64(b.st, 0);
    else
        rc = gp_diag_set(diag, GP_ENOENT, db->path, "%s: no job has ext '%s'",
                         what, ext);
    done_with(b.st);
    return rc;
}

static int row_job(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_job j;
    int rc = job_decode(e->db, st, &j, e->diag);

    return rc != GP_OK ? rc : e->fn.job(e->priv, &j);
}

int gp_db_jobs_each(struct gp_db *db, enum gp_db_which which, int64_t after_id,
                    uint32_t limit,
                    int (*fn)(void *priv, const struct gp_db_job *job),
                    void *priv, struct gp_diag *diag)
{
    const char *what = "list jobs";
    struct each e = {db, {.job = fn}, priv, diag};
    enum stmt_id id = which == GP_DB_LIVE    ? ST_JOBS_LIVE
                      : which == GP_DB_ENDED ? ST_JOBS_ENDED
                                             : ST_JOBS_ALL;
    struct bind b;
    int rc;

    if (!fn || (unsigned)which > GP_DB_ALL)
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "%s: no callback or a bad 'which'", what);
    if ((rc = stmt(db, id, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_i64(&b, 1, after_id);
    b_i64(&b, 2, limit ? (int64_t)limit : -1);
    return iterate(&e, &b, row_job, what);
}

/* ---- events ------------------------------------------------------------ */

/* The next seq is read, then the row inserted: two plain statements. An
 * INSERT ... RETURNING costs SQLite an ephemeral table per execution, which
 * made this, once per submit, the daemon's most expensive statement. */
int gp_db_event_append(struct gp_db *db, const struct gp_db_event *ev,
                       uint32_t *seq, struct gp_diag *diag)
{
    const char *what = "append event";
    struct bind q = {db->st[ST_EVENT_NEXT_SEQ], SQLITE_OK};
    struct bind b = {db->st[ST_EVENT_APPEND], SQLITE_OK};
    int64_t n;
    bool found;
    int rc;

    if (!ev)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no event", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "kind", ev->kind, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "detail_json", ev->detail_json,
                         false)) != GP_OK)
        return rc;
    b_i64(&q, 1, ev->job_id);
    if ((rc = step_one(db, &q, &found, diag, what)) != GP_OK)
        return rc;
    n = found ? sqlite3_column_int64(q.st, 0) : 1;
    done_with(q.st);
    b_i64(&b, 1, ev->job_id);
    b_i64(&b, 2, n);
    b_i64(&b, 3, ev->ts_us);
    b_text(&b, 4, ev->kind);
    b_text(&b, 5, ev->detail_json);
    if ((rc =
             step_write(db, &b, NULL, diag, "append event '%s' to job %" PRId64,
                        ev->kind, ev->job_id)) != GP_OK)
        return rc;
    if (seq)
        *seq = (uint32_t)n;
    return GP_OK;
}

static int row_event(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_event ev = {
        .job_id = sqlite3_column_int64(st, 0),
        .seq = (uint32_t)sqlite3_column_int64(st, 1),
        .ts_us = sqlite3_column_int64(st, 2),
        .kind = col_str(st, 3),
        .detail_json = col_text(st, 4),
    };

    return e->fn.event(e->priv, &ev);
}

int gp_db_events_each(struct gp_db *db, int64_t job_id,
                      int (*fn)(void *priv, const struct gp_db_event *ev),
                      void *priv, struct gp_diag *diag)
{
    const char *what = "list events";
    struct each e = {db, {.event = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_EVENTS_EACH, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_i64(&b, 1, job_id);
    return iterate(&e, &b, row_event, what);
}

/* ---- runs -------------------------------------------------------------- */

int gp_db_run_begin(struct gp_db *db, const struct gp_db_run *r, uint32_t *run,
                    struct gp_diag *diag)
{
    const char *what = "begin run";
    struct bind b = {db->st[ST_RUN_BEGIN], SQLITE_OK};
    int64_t n = 0;
    int rc;

    if (!r)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no run", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "node", r->node, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "devices", r->devices, false)) !=
            GP_OK)
        return rc;
    b_i64(&b, 1, r->job_id);
    b_text(&b, 2, r->node);
    b_text(&b, 3, r->devices ? r->devices : "");
    b_i64(&b, 4, r->milli);
    b_i64(&b, 5, r->started_us);
    b_i64(&b, 6, r->supervisor_pid);
    b_i64(&b, 7, (int64_t)r->supervisor_start_ticks);
    if ((rc = step_write(db, &b, &n, diag, "begin a run of job %" PRId64,
                         r->job_id)) != GP_OK)
        return rc;
    if (run)
        *run = (uint32_t)n;
    return GP_OK;
}

/* After an update that changed nothing: is the run missing (GP_ENOENT) or
 * ended already (GP_ESTATE)? */
static int run_why_unchanged(struct gp_db *db, int64_t job_id, uint32_t run,
                             const char *what, struct gp_diag *diag)
{
    struct bind b = {db->st[ST_RUN_IS_ENDED], SQLITE_OK};
    bool found;
    int rc;

    b_i64(&b, 1, job_id);
    b_i64(&b, 2, run);
    if ((rc = step_one(db, &b, &found, diag, what)) != GP_OK)
        return rc;
    if (!found)
        rc = gp_diag_set(diag, GP_ENOENT, db->path, "%s: no such run", what);
    else
        rc = gp_diag_set(diag, GP_ESTATE, db->path, "%s: the run has ended",
                         what);
    done_with(b.st);
    return rc;
}

int gp_db_run_set_supervisor(struct gp_db *db, int64_t job_id, uint32_t run,
                             int32_t pid, uint64_t start_ticks,
                             struct gp_diag *diag)
{
    char what[64];
    struct bind b = {db->st[ST_RUN_SUPERVISOR], SQLITE_OK};
    int rc;

    snprintf(what, sizeof(what), "set the supervisor of job %" PRId64 " run %u",
             job_id, run);
    if ((rc = writable(db, diag, what)) != GP_OK)
        return rc;
    b_i64(&b, 1, job_id);
    b_i64(&b, 2, run);
    b_i64(&b, 3, pid);
    b_i64(&b, 4, (int64_t)start_ticks);
    if ((rc = step_write(db, &b, NULL, diag, "%s", what)) != GP_OK)
        return rc;
    if (sqlite3_changes(db->sql) == 0)
        return gp_diag_set(diag, GP_ENOENT, db->path, "%s: no such run", what);
    return GP_OK;
}

int gp_db_run_end(struct gp_db *db, int64_t job_id, uint32_t run,
                  int64_t ended_us, const char *reason, struct gp_diag *diag)
{
    char what[48];
    struct bind b = {db->st[ST_RUN_END], SQLITE_OK};
    int rc;

    snprintf(what, sizeof(what), "end job %" PRId64 " run %u", job_id, run);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "reason", reason, true)) != GP_OK)
        return rc;
    if (ended_us == GP_TIME_NONE)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no ended_us", what);
    b_i64(&b, 1, job_id);
    b_i64(&b, 2, run);
    b_i64(&b, 3, ended_us);
    b_text(&b, 4, reason);
    if ((rc = step_write(db, &b, NULL, diag, "%s", what)) != GP_OK)
        return rc;
    if (sqlite3_changes(db->sql) == 0)
        return run_why_unchanged(db, job_id, run, what, diag);
    return GP_OK;
}

static int row_run(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_run r = {
        .job_id = sqlite3_column_int64(st, 0),
        .run = (uint32_t)sqlite3_column_int64(st, 1),
        .node = col_str(st, 2),
        .devices = col_str(st, 3),
        .milli = (uint32_t)sqlite3_column_int64(st, 4),
        .started_us = sqlite3_column_int64(st, 5),
        .ended_us = col_time(st, 6),
        .end_reason = col_text(st, 7),
        .supervisor_pid = (int32_t)sqlite3_column_int64(st, 8),
        .supervisor_start_ticks = (uint64_t)sqlite3_column_int64(st, 9),
    };

    return e->fn.run(e->priv, &r);
}

int gp_db_runs_each(struct gp_db *db, int64_t job_id, bool open_only,
                    int (*fn)(void *priv, const struct gp_db_run *r),
                    void *priv, struct gp_diag *diag)
{
    const char *what = "list runs";
    struct each e = {db, {.run = fn}, priv, diag};
    enum stmt_id id = job_id ? (open_only ? ST_RUNS_JOB_OPEN : ST_RUNS_JOB)
                             : (open_only ? ST_RUNS_ALL_OPEN : ST_RUNS_ALL);
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, id, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    if (job_id)
        b_i64(&b, 1, job_id);
    return iterate(&e, &b, row_run, what);
}

/* ---- actions ------------------------------------------------------------- */

int gp_db_action_add(struct gp_db *db, const struct gp_db_action *a,
                     int64_t *id, struct gp_diag *diag)
{
    const char *what = "add action";
    struct bind b = {db->st[ST_ACTION_ADD], SQLITE_OK};
    int rc;

    if (!a)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no action", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "kind", a->kind, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "reason", a->reason, false)) !=
            GP_OK ||
        (rc = check_text(db, diag, what, "detail_json", a->detail_json,
                         false)) != GP_OK)
        return rc;
    if (a->job_id)
        b_i64(&b, 1, a->job_id);
    else
        b_text(&b, 1, NULL);
    b_text(&b, 2, a->kind);
    b_i64(&b, 3, a->at_us);
    b_time(&b, 4, a->deadline_us);
    b_text(&b, 5, a->reason);
    b_text(&b, 6, a->detail_json);
    if ((rc = step_write(db, &b, NULL, diag, "add action '%s' for job %" PRId64,
                         a->kind, a->job_id)) != GP_OK)
        return rc;
    if (id)
        *id = sqlite3_last_insert_rowid(db->sql);
    return GP_OK;
}

int gp_db_action_done(struct gp_db *db, int64_t id, int64_t done_us,
                      struct gp_diag *diag)
{
    char what[48];
    struct bind b = {db->st[ST_ACTION_DONE], SQLITE_OK};
    bool found;
    int rc;

    snprintf(what, sizeof(what), "mark action %" PRId64 " done", id);
    if ((rc = writable(db, diag, what)) != GP_OK)
        return rc;
    if (done_us == GP_TIME_NONE)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no done_us", what);
    b_i64(&b, 1, id);
    b_i64(&b, 2, done_us);
    if ((rc = step_write(db, &b, NULL, diag, "%s", what)) != GP_OK)
        return rc;
    if (sqlite3_changes(db->sql) > 0)
        return GP_OK;
    b.st = db->st[ST_ACTION_IS_DONE];
    b.rc = SQLITE_OK;
    b_i64(&b, 1, id);
    if ((rc = step_one(db, &b, &found, diag, what)) != GP_OK)
        return rc;
    rc = found
             ? gp_diag_set(diag, GP_ESTATE, db->path, "%s: done already", what)
             : gp_diag_set(diag, GP_ENOENT, db->path, "%s: no such action",
                           what);
    done_with(b.st);
    return rc;
}

static int row_action(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_action a = {
        .id = sqlite3_column_int64(st, 0),
        .job_id = sqlite3_column_int64(st, 1), /* NULL reads as 0 */
        .kind = col_str(st, 2),
        .at_us = sqlite3_column_int64(st, 3),
        .deadline_us = col_time(st, 4),
        .reason = col_text(st, 5),
        .detail_json = col_text(st, 6),
        .done_us = col_time(st, 7),
    };

    return e->fn.action(e->priv, &a);
}

int gp_db_actions_each_undone(struct gp_db *db,
                              int (*fn)(void *priv,
                                        const struct gp_db_action *a),
                              void *priv, struct gp_diag *diag)
{
    const char *what = "list undone actions";
    struct each e = {db, {.action = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_ACTIONS_UNDONE, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    return iterate(&e, &b, row_action, what);
}

/* ---- tenants, nodes --------------------------------------------------------
 */

/* Delete by name; GP_ENOENT when nothing was there. */
static int delete_named(struct gp_db *db, enum stmt_id id, const char *kind,
                        const char *name, struct gp_diag *diag)
{
    char what[48];
    struct bind b = {db->st[id], SQLITE_OK};
    int rc;

    snprintf(what, sizeof(what), "delete %s", kind);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "name", name, true)) != GP_OK)
        return rc;
    b_text(&b, 1, name);
    if ((rc = step_write(db, &b, NULL, diag, "%s '%s'", what, name)) != GP_OK)
        return rc;
    if (sqlite3_changes(db->sql) == 0)
        return gp_diag_set(diag, GP_ENOENT, db->path, "%s: no %s '%s'", what,
                           kind, name);
    return GP_OK;
}

int gp_db_tenant_upsert(struct gp_db *db, const struct gp_db_tenant *t,
                        struct gp_diag *diag)
{
    const char *what = "save tenant";
    struct bind b = {db->st[ST_TENANT_UPSERT], SQLITE_OK};
    int rc;

    if (!t)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no tenant", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "name", t->name, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "spec_json", t->spec_json, true)) !=
            GP_OK)
        return rc;
    b_text(&b, 1, t->name);
    b_text(&b, 2, t->spec_json);
    b_i64(&b, 3, t->created_us);
    b_i64(&b, 4, t->updated_us);
    return step_write(db, &b, NULL, diag, "%s '%s'", what, t->name);
}

int gp_db_tenant_delete(struct gp_db *db, const char *name,
                        struct gp_diag *diag)
{
    return delete_named(db, ST_TENANT_DELETE, "tenant", name, diag);
}

static int row_tenant(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_tenant t = {
        .name = col_str(st, 0),
        .spec_json = col_str(st, 1),
        .created_us = sqlite3_column_int64(st, 2),
        .updated_us = sqlite3_column_int64(st, 3),
    };

    return e->fn.tenant(e->priv, &t);
}

int gp_db_tenants_each(struct gp_db *db,
                       int (*fn)(void *priv, const struct gp_db_tenant *t),
                       void *priv, struct gp_diag *diag)
{
    const char *what = "list tenants";
    struct each e = {db, {.tenant = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_TENANTS_EACH, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    return iterate(&e, &b, row_tenant, what);
}

int gp_db_node_upsert(struct gp_db *db, const struct gp_db_node *n,
                      struct gp_diag *diag)
{
    const char *what = "save node";
    struct bind b = {db->st[ST_NODE_UPSERT], SQLITE_OK};
    int rc;

    if (!n)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no node", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "name", n->name, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "spec_json", n->spec_json, true)) !=
            GP_OK ||
        (rc = check_text(db, diag, what, "state", n->state, true)) != GP_OK)
        return rc;
    b_text(&b, 1, n->name);
    b_text(&b, 2, n->spec_json);
    b_text(&b, 3, n->state);
    b_i64(&b, 4, n->updated_us);
    return step_write(db, &b, NULL, diag, "%s '%s'", what, n->name);
}

int gp_db_node_delete(struct gp_db *db, const char *name, struct gp_diag *diag)
{
    return delete_named(db, ST_NODE_DELETE, "node", name, diag);
}

static int row_node(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_node n = {
        .name = col_str(st, 0),
        .spec_json = col_str(st, 1),
        .state = col_str(st, 2),
        .updated_us = sqlite3_column_int64(st, 3),
    };

    return e->fn.node(e->priv, &n);
}

int gp_db_nodes_each(struct gp_db *db,
                     int (*fn)(void *priv, const struct gp_db_node *n),
                     void *priv, struct gp_diag *diag)
{
    const char *what = "list nodes";
    struct each e = {db, {.node = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_NODES_EACH, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    return iterate(&e, &b, row_node, what);
}

/* ---- GPU samples ------------------------------------------------------------
 */

int gp_db_sample_add(struct gp_db *db, const struct gp_db_gpu_sample *s,
                     struct gp_diag *diag)
{
    const char *what = "add GPU sample";
    struct bind b = {db->st[ST_SAMPLE_ADD], SQLITE_OK};
    int rc;

    if (!s)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no sample", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "node", s->node, true)) != GP_OK)
        return rc;
    b_i64(&b, 1, s->ts_us);
    b_text(&b, 2, s->node);
    b_i64(&b, 3, s->gpu);
    b_double(&b, 4, s->util_pct);
    b_u64_or_null(&b, 5, s->mem_used_mib);
    b_u64_or_null(&b, 6, s->mem_total_mib);
    b_double(&b, 7, s->temp_c);
    b_double(&b, 8, s->power_w);
    return step_write(db, &b, NULL, diag, "%s of %s gpu %u", what, s->node,
                      s->gpu);
}

static int row_sample(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_gpu_sample s = {
        .ts_us = sqlite3_column_int64(st, 0),
        .node = col_str(st, 1),
        .gpu = (uint32_t)sqlite3_column_int64(st, 2),
        .util_pct = col_double(st, 3),
        .mem_used_mib = col_u64_or_max(st, 4),
        .mem_total_mib = col_u64_or_max(st, 5),
        .temp_c = col_double(st, 6),
        .power_w = col_double(st, 7),
    };

    return e->fn.sample(e->priv, &s);
}

int gp_db_samples_each(struct gp_db *db, int64_t from_us, int64_t to_us,
                       int (*fn)(void *priv, const struct gp_db_gpu_sample *s),
                       void *priv, struct gp_diag *diag)
{
    const char *what = "list GPU samples";
    struct each e = {db, {.sample = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_SAMPLES_EACH, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_i64(&b, 1, from_us);
    b_i64(&b, 2, to_us);
    return iterate(&e, &b, row_sample, what);
}

/* ---- history, usage
 * ----------------------------------------------------------- */

int gp_db_history_add(struct gp_db *db, const struct gp_db_history *h,
                      struct gp_diag *diag)
{
    const char *what = "add history";
    struct bind b = {db->st[ST_HISTORY_ADD], SQLITE_OK};
    int rc;

    if (!h)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no record", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "user", h->user, true)) != GP_OK ||
        (rc = check_text(db, diag, what, "name", h->name, false)) != GP_OK ||
        (rc = check_text(db, diag, what, "tenant", h->tenant, true)) != GP_OK)
        return rc;
    b_text(&b, 1, h->user);
    b_text(&b, 2, h->name ? h->name : "");
    b_text(&b, 3, h->tenant);
    b_i64(&b, 4, h->gpus);
    b_i64(&b, 5, h->runtime_us);
    b_i64(&b, 6, h->gpu_us);
    b_i64(&b, 7, h->end_us);
    return step_write(db, &b, NULL, diag, "%s of user %s", what, h->user);
}

static int row_history(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_history h = {
        .user = col_str(st, 0),
        .name = col_str(st, 1),
        .tenant = col_str(st, 2),
        .gpus = (uint32_t)sqlite3_column_int64(st, 3),
        .runtime_us = sqlite3_column_int64(st, 4),
        .gpu_us = sqlite3_column_int64(st, 5),
        .end_us = sqlite3_column_int64(st, 6),
    };

    return e->fn.history(e->priv, &h);
}

int gp_db_history_each(struct gp_db *db, int64_t since_us,
                       int (*fn)(void *priv, const struct gp_db_history *h),
                       void *priv, struct gp_diag *diag)
{
    const char *what = "list history";
    struct each e = {db, {.history = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_HISTORY_EACH, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_i64(&b, 1, since_us);
    return iterate(&e, &b, row_history, what);
}

int gp_db_usage_save(struct gp_db *db, const struct gp_db_usage *u,
                     struct gp_diag *diag)
{
    const char *what = "save usage";
    struct bind b = {db->st[ST_USAGE_SAVE], SQLITE_OK};
    int rc;

    if (!u)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no usage", what);
    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "tenant", u->tenant, true)) != GP_OK)
        return rc;
    if (!isfinite(u->decayed_gpu_us))
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "%s: tenant %s: decayed_gpu_us is not a number",
                           what, u->tenant);
    b_text(&b, 1, u->tenant);
    b_double(&b, 2, u->decayed_gpu_us);
    b_i64(&b, 3, u->at_us);
    return step_write(db, &b, NULL, diag, "%s of tenant %s", what, u->tenant);
}

static int row_usage(struct each *e, sqlite3_stmt *st)
{
    struct gp_db_usage u = {
        .tenant = col_str(st, 0),
        .decayed_gpu_us = sqlite3_column_double(st, 1),
        .at_us = sqlite3_column_int64(st, 2),
    };

    return e->fn.usage(e->priv, &u);
}

int gp_db_usage_each(struct gp_db *db,
                     int (*fn)(void *priv, const struct gp_db_usage *u),
                     void *priv, struct gp_diag *diag)
{
    const char *what = "list usage";
    struct each e = {db, {.usage = fn}, priv, diag};
    struct bind b;
    int rc;

    if (!fn)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s: no callback", what);
    if ((rc = stmt(db, ST_USAGE_EACH, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    return iterate(&e, &b, row_usage, what);
}

/* ---- meta
 * -------------------------------------------------------------------- */

int gp_db_meta_get(struct gp_db *db, const char *key, char *buf, size_t len,
                   struct gp_diag *diag)
{
    const char *what = "get meta";
    struct bind b;
    bool found;
    int rc;

    if ((rc = check_text(db, diag, what, "key", key, true)) != GP_OK)
        return rc;
    if (!buf || len == 0)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s %s: no buffer", what,
                           key);
    if ((rc = stmt(db, ST_META_GET, &b.st, diag, what)) != GP_OK)
        return rc;
    b.rc = SQLITE_OK;
    b_text(&b, 1, key);
    if ((rc = step_one(db, &b, &found, diag, what)) != GP_OK)
        return rc;
    if (!found) {
        rc = gp_diag_set(diag, GP_ENOENT, db->path, "%s: no key '%s'", what,
                         key);
    } else {
        const char *v = col_str(b.st, 0);
        size_t n = strlen(v);

        if (n >= len)
            rc = gp_diag_set(diag, GP_ERANGE, db->path,
                             "%s %s: the value has %zu bytes, the buffer %zu",
                             what, key, n, len);
        else
            memcpy(buf, v, n + 1);
    }
    done_with(b.st);
    return rc;
}

int gp_db_meta_set(struct gp_db *db, const char *key, const char *value,
                   struct gp_diag *diag)
{
    const char *what = "set meta";
    struct bind b = {db->st[ST_META_SET], SQLITE_OK};
    int rc;

    if ((rc = writable(db, diag, what)) != GP_OK ||
        (rc = check_text(db, diag, what, "key", key, true)) != GP_OK)
        return rc;
    if (!value)
        return gp_diag_set(diag, GP_EINVAL, db->path, "%s %s: no value", what,
                           key);
    if ((rc = check_text(db, diag, what, "value", value, false)) != GP_OK)
        return rc;
    b_text(&b, 1, key);
    b_text(&b, 2, value);
    return step_write(db, &b, NULL, diag, "%s %s", what, key);
}

int gp_db_meta_get_i64(struct gp_db *db, const char *key, int64_t *value,
                       struct gp_diag *diag)
{
    char buf[32], *end;
    long long v;
    int rc = gp_db_meta_get(db, key, buf, sizeof(buf), diag);

    if (rc == GP_ERANGE)
        return gp_diag_set(diag, GP_EPARSE, db->path,
                           "meta %s: the value is not an integer", key);
    if (rc != GP_OK)
        return rc;
    errno = 0;
    v = strtoll(buf, &end, 10);
    if (end == buf || *end || errno)
        return gp_diag_set(diag, GP_EPARSE, db->path,
                           "meta %s: '%s' is not an integer", key, buf);
    *value = v;
    return GP_OK;
}

int gp_db_meta_set_i64(struct gp_db *db, const char *key, int64_t value,
                       struct gp_diag *diag)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%" PRId64, value);
    return gp_db_meta_set(db, key, buf, diag);
}

/* ---- prune, check, checkpoint
 * -------------------------------------------------- */

/* Run one prune statement: rows older than cutoff, at most limit (-1 =
 * all); add the rows deleted to *count. */
static int prune_one(struct gp_db *db, enum stmt_id id, int64_t cutoff,
                     int64_t limit, uint64_t *count, const char *what,
                     struct gp_diag *diag)
{
    struct bind b = {db->st[id], SQLITE_OK};
    int rc;

    b_i64(&b, 1, cutoff);
    b_i64(&b, 2, limit);
    if ((rc = step_write(db, &b, NULL, diag, "prune %s", what)) != GP_OK)
        return rc;
    *count += (uint64_t)sqlite3_changes(db->sql);
    return GP_OK;
}

int gp_db_prune(struct gp_db *db, int64_t now_us,
                const struct gp_db_retention *r, struct gp_db_pruned *out,
                struct gp_diag *diag)
{
    struct gp_db_pruned n = {0};
    int64_t limit;
    int rc;

    if ((rc = writable(db, diag, "prune")) != GP_OK)
        return rc;
    if (!r || r->jobs_us < 0 || r->samples_us < 0 || r->history_us < 0)
        return gp_diag_set(diag, GP_EINVAL, db->path,
                           "prune: no retention, or a negative one");
    limit = r->max_rows ? (int64_t)r->max_rows : -1;
    if (r->jobs_us > 0) {
        int64_t cut = gp_add_sat(now_us, -r->jobs_us);

        /* children first: the cascade would delete them too, uncounted */
        if ((rc = prune_one(db, ST_PRUNE_EVENTS, cut, limit, &n.events,
                            "job events", diag)) != GP_OK ||
            (rc = prune_one(db, ST_PRUNE_RUNS, cut, limit, &n.runs, "runs",
                            diag)) != GP_OK ||
            (rc = prune_one(db, ST_PRUNE_JOB_ACTIONS, cut, limit, &n.actions,
                            "actions of jobs", diag)) != GP_OK ||
            (rc = prune_one(db, ST_PRUNE_JOBS, cut, limit, &n.jobs, "jobs",
                            diag)) != GP_OK ||
            (rc = prune_one(db, ST_PRUNE_DONE_ACTIONS, cut, limit, &n.actions,
                            "done actions", diag)) != GP_OK)
            return rc;
    }
    if (r->samples_us > 0 &&
        (rc =
             prune_one(db, ST_PRUNE_SAMPLES, gp_add_sat(now_us, -r->samples_us),
                       limit, &n.samples, "GPU samples", diag)) != GP_OK)
        return rc;
    if (r->history_us > 0 &&
        (rc =
             prune_one(db, ST_PRUNE_HISTORY, gp_add_sat(now_us, -r->history_us),
                       limit, &n.history, "history", diag)) != GP_OK)
        return rc;
    if (out)
        *out = n;
    return GP_OK;
}

int gp_db_check(struct gp_db *db, bool full, struct gp_diag *diag)
{
    char first[256];
    int64_t n;
    int rc;

    if (db->iterating)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "check: from inside an iteration");
    if ((rc = pragma_value(
             db, full ? "PRAGMA integrity_check" : "PRAGMA quick_check", NULL,
             first, sizeof(first), diag)) != GP_OK)
        return rc;
    if (strcmp(first, "ok") != 0)
        return gp_diag_set(diag, GP_EIO, db->path, "%s: %s",
                           full ? "integrity_check" : "quick_check", first);
    if ((rc = pragma_value(db, "SELECT count(*) FROM pragma_foreign_key_check",
                           &n, NULL, 0, diag)) != GP_OK)
        return rc;
    if (n > 0)
        return gp_diag_set(
            diag, GP_EIO, db->path,
            "foreign_key_check: %" PRId64 " rows point to nothing", n);
    return GP_OK;
}

int gp_db_checkpoint(struct gp_db *db, struct gp_diag *diag)
{
    int rc;

    if (db->in_txn || db->iterating)
        return gp_diag_set(diag, GP_ESTATE, db->path,
                           "checkpoint: inside a transaction or iteration");
    rc = sqlite3_wal_checkpoint_v2(db->sql, NULL, SQLITE_CHECKPOINT_TRUNCATE,
                                   NULL, NULL);
    /* busy: a reader (a backup) holds old pages; the next one goes on */
    if (rc != SQLITE_OK && rc != SQLITE_BUSY)
        return sql_fail(db, diag, rc, "checkpoint");
    return GP_OK;
}
