/* db.h - the daemon's durable store: SQLite in WAL mode (docs/store.md).
 *
 * The store is a log, not a cache. The daemon's loop writes every change
 * and every decision here and commits before it answers a client or carries
 * the decision out (decide, persist, act); after a kill -9 at any instant
 * the restarted daemon rebuilds its state from the loaders below.
 *
 * Threads: one thread uses a struct gp_db (the loop that owns the state).
 * It is not safe to share between threads.
 *
 * Transactions (group commit): every write happens between gp_db_begin and
 * gp_db_commit; the loop puts all the requests waiting into one transaction
 * so that one fsync acknowledges them all. A write outside a transaction is
 * GP_ESTATE: nobody can forget to make a change durable. Reads work at any
 * time; inside a transaction they see its uncommitted writes.
 *
 * Errors: functions return GP_OK or a negative GP_E* code and fill the
 * optional diag (NULL is fine everywhere) only when they fail:
 *   GP_EIO     SQLite failed (disk full, i/o error, corrupt file, locked);
 *              diag.where is the store's path, diag.msg says what was being
 *              done and SQLite's message ("insert job (ext a1): disk full").
 *   GP_EEXIST  a duplicate key (a job's ext, a run or event number).
 *   GP_ENOENT  no such row (updating a job that is not there, an event for a
 *              job that is not there).
 *   GP_EINVAL  a bad argument (a required string missing, a terminal state
 *              without end_us); diag names the field.
 *   GP_ERANGE  a string over GP_DB_TEXT_MAX, a buffer too small.
 *   GP_ESTATE  a write outside a transaction or from inside an iteration,
 *              a transaction begun twice, a run ended twice.
 *   GP_ENOMEM  out of memory.
 * GP_EEXIST, GP_ENOENT, GP_EINVAL and GP_ERANGE leave an open transaction
 * as it was: the batch goes on without the refused write. GP_EIO may have
 * ended it (SQLite rolls back on a full disk or an i/o error): then
 * gp_db_in_transaction says false, further writes fail, and the batch must
 * be answered as failed.
 *
 * Units: times are integer microseconds since the Unix epoch (names end in
 * _us); GP_TIME_NONE (-1) means "not yet" and is stored as NULL.
 *
 * Strings passed in are copied (borrowed for the call only). Strings handed
 * to an iteration callback are valid during that callback only; those of
 * gp_db_job_get until the next gp_db_job_get or gp_db_close.
 */
#ifndef GPUPOOL_DAEMON_DB_H
#define GPUPOOL_DAEMON_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpupool/base.h"
#include "gpupool/job.h"

/* The longest string the store accepts (a job's spec_json, an event's
 * detail): 1 MiB. Longer is GP_ERANGE. */
#define GP_DB_TEXT_MAX (1024 * 1024)

/* PRAGMA application_id of a gpupool store ("GPDB"). */
#define GP_DB_APPLICATION_ID 0x47504442

/* exit_code of a job that has not exited (or was never started). */
#define GP_DB_NO_EXIT INT32_MIN

struct gp_db;

enum gp_db_sync {
    /* fsync the WAL at every commit: an acknowledged change survives a
     * power loss or a kernel crash. The default. */
    GP_DB_SYNC_FULL,
    /* fsync only at checkpoints: an acknowledged change survives kill -9
     * of the daemon (it is in the WAL, in the page cache), but the last
     * commits before a power loss or a kernel crash may be lost. */
    GP_DB_SYNC_NORMAL,
};

struct gp_db_options {
    enum gp_db_sync sync;
    /* how long a statement waits for a lock another process holds (a
     * backup, the sqlite3 shell) before GP_EIO; 0 = 5000 ms */
    uint32_t busy_timeout_ms;
    /* log sink for migrations; NULL = silent */
    const struct gp_env *env;
};

/* The version of the schema this build writes (the number of migrations). */
uint32_t gp_db_schema_version(void);

/* Open the store at path, creating it if needed: missing parent folders
 * (mode 0700) and the file (mode 0600; SQLite gives -wal and -shm the same
 * mode). Sets WAL, synchronous, busy_timeout and foreign keys, then runs the
 * migrations from the file's version to gp_db_schema_version(), each in its
 * own transaction. o may be NULL (defaults).
 *
 * A store is held by one gp_db at a time: it takes an exclusive flock on
 * the file for as long as it is open (local file systems only: WAL needs
 * them anyway). Errors:
 *   GP_ESTATE  another process (or another gp_db here) has the store open.
 *   GP_ERANGE  the file was written by a newer gpupool (its schema version
 *              is above this build's); nothing is changed.
 *   GP_EINVAL  the file is not a gpupool store (not SQLite, or SQLite of
 *              another application); nothing is changed. An empty file
 *              or an empty SQLite database becomes a new store.
 *   GP_EIO     the folder or file cannot be created or read, a migration
 *              failed (that migration is rolled back; the ones before it
 *              stay).
 * *out is written only on success; close it with gp_db_close. */
int gp_db_open(struct gp_db **out, const char *path,
               const struct gp_db_options *o, struct gp_diag *diag);

/* Close the store. An open transaction is rolled back (nothing of it was
 * acknowledged). NULL is a no-op. */
void gp_db_close(struct gp_db *db);

/* The path the store was opened with (owned by db). */
const char *gp_db_path(const struct gp_db *db);

/* ---- transactions --------------------------------------------------- */

/* Begin a write transaction (BEGIN IMMEDIATE: the write lock is taken now,
 * so no write inside can fail for being locked). GP_ESTATE if one is
 * already open. */
int gp_db_begin(struct gp_db *db, struct gp_diag *diag);

/* Commit: once this returns GP_OK the transaction is on disk (synchronous
 * FULL) or survives the process (NORMAL). On GP_EIO nothing of it was
 * committed and the transaction is over (rolled back). GP_ESTATE when no
 * transaction is open. */
int gp_db_commit(struct gp_db *db, struct gp_diag *diag);

/* Roll the transaction back: none of its writes remain. GP_ESTATE when no
 * transaction is open. */
int gp_db_rollback(struct gp_db *db, struct gp_diag *diag);

/* Is a transaction open? False after a GP_EIO that ended one. */
bool gp_db_in_transaction(const struct gp_db *db);

/* One request inside a group commit: gp_db_savepoint marks where it began,
 * gp_db_savepoint_release keeps its writes (in the transaction; they are
 * committed with it), gp_db_savepoint_rollback undoes only them. So a
 * request that fails half-way leaves nothing of itself in the batch. One
 * level: GP_ESTATE when none is set (release, rollback), one is set
 * already, or no transaction is open (savepoint). */
int gp_db_savepoint(struct gp_db *db, struct gp_diag *diag);
int gp_db_savepoint_release(struct gp_db *db, struct gp_diag *diag);
int gp_db_savepoint_rollback(struct gp_db *db, struct gp_diag *diag);

/* ---- jobs ------------------------------------------------------------ */

/* A job's durable record. Immutable after insert: ext, tenant, user, uid,
 * gid, name, spec_json, submit_us. The rest changes with
 * gp_db_job_update. A job is ended exactly when its state is terminal
 * (completed, failed, cancelled, rejected), and then end_us is set. */
struct gp_db_job {
    int64_t id;            /* gpupool's public job id: assigned by
                              gp_db_job_insert, from 1, increasing, never
                              reused (not even once pruned) */
    const char *ext;       /* the client's idempotency key, unique;
                              NULL or "" = none */
    const char *tenant;    /* required */
    const char *user;      /* required: the submitting user's name */
    uint32_t uid, gid;     /* the submitter's credentials */
    const char *name;      /* NULL = "" */
    const char *spec_json; /* required: the full request as the daemon
                              parsed it (argv, env, cwd, gpus, ...); stored
                              as given, not parsed here */
    enum gp_job_state state;
    int64_t submit_us;      /* >= 0 */
    int64_t queued_us;      /* when it last joined the queue; GP_TIME_NONE */
    int64_t first_start_us; /* GP_TIME_NONE until started */
    int64_t end_us;         /* GP_TIME_NONE until ended */
    uint32_t restarts;      /* runs after the first */
    uint32_t preemptions;
    int32_t exit_code;    /* GP_DB_NO_EXIT = none */
    const char *reason;   /* why it failed, was cancelled or rejected;
                             NULL = none */
    int64_t gpu_us;       /* GPU-microseconds held (ended runs) */
    int64_t work_done_us; /* work finished (checkpointed) so far */
    int64_t predicted_us; /* the predictor's run time; 0 = unknown */
    int64_t updated_us;   /* when this record last changed */
};

/* Insert a new job and write its id to *id (id may be NULL); job->id is
 * ignored. GP_EEXIST when another job has the same ext (find it with
 * gp_db_job_find_ext to answer an idempotent retry). */
int gp_db_job_insert(struct gp_db *db, const struct gp_db_job *job, int64_t *id,
                     struct gp_diag *diag);

/* Write the mutable fields of job (state, queued_us, first_start_us,
 * end_us, restarts, preemptions, exit_code, reason, gpu_us, work_done_us,
 * predicted_us, updated_us) to the job job->id; the others are ignored.
 * GP_ENOENT when there is no such job. */
int gp_db_job_update(struct gp_db *db, const struct gp_db_job *job,
                     struct gp_diag *diag);

/* Read the job id into *out. Its strings live in db until the next
 * gp_db_job_get or gp_db_close. GP_ENOENT when there is none. */
int gp_db_job_get(struct gp_db *db, int64_t id, struct gp_db_job *out,
                  struct gp_diag *diag);

/* The id of the job with this ext. GP_ENOENT when there is none. */
int gp_db_job_find_ext(struct gp_db *db, const char *ext, int64_t *id,
                       struct gp_diag *diag);

enum gp_db_which {
    GP_DB_LIVE,  /* not ended: what a restarted daemon loads */
    GP_DB_ENDED, /* ended (and not yet pruned) */
    GP_DB_ALL,
};

/* Call fn for each job of `which` with an id above after_id, in id order,
 * at most limit of them (0 = no limit): after_id and limit page through a
 * long list. fn's job and its strings are valid during the call only. fn
 * returns 0 to go on; anything else stops the iteration and is returned.
 *
 * The same holds for every *_each below, and also: fn may read the store
 * (gp_db_job_get, another *_each) but not write it (GP_ESTATE), nor start
 * the iteration it is in again (GP_ESTATE). A row the store cannot decode
 * (an unknown state) is GP_EPARSE naming the row. */
int gp_db_jobs_each(struct gp_db *db, enum gp_db_which which, int64_t after_id,
                    uint32_t limit,
                    int (*fn)(void *priv, const struct gp_db_job *job),
                    void *priv, struct gp_diag *diag);

/* ---- a job's events: append-only history ------------------------------ */

struct gp_db_event {
    int64_t job_id;
    uint32_t seq; /* 1, 2, ... per job, assigned on append */
    int64_t ts_us;
    const char *kind;        /* required: "submitted", "started", ... */
    const char *detail_json; /* NULL = none */
};

/* Append ev (ev->seq is ignored) and write its number to *seq (may be
 * NULL). GP_ENOENT when there is no job ev->job_id. */
int gp_db_event_append(struct gp_db *db, const struct gp_db_event *ev,
                       uint32_t *seq, struct gp_diag *diag);

/* The events of one job, in order. */
int gp_db_events_each(struct gp_db *db, int64_t job_id,
                      int (*fn)(void *priv, const struct gp_db_event *ev),
                      void *priv, struct gp_diag *diag);

/* ---- runs: where a job ran, and how to find its processes again ------- */

/* One run of a job on one node. A restarted daemon finds the job's
 * supervisor by pid plus its start time (field 22 of /proc/<pid>/stat, in
 * clock ticks), never by pid alone. */
struct gp_db_run {
    int64_t job_id;
    uint32_t run;        /* 1, 2, ... per job, assigned by begin */
    const char *node;    /* required */
    const char *devices; /* required: device indexes, "0,1"; "" = none */
    uint32_t milli;      /* milli-GPUs on each device: 1000 for whole
                            devices, 1..999 for a share of one */
    int64_t started_us;
    int64_t ended_us;       /* GP_TIME_NONE while open */
    const char *end_reason; /* NULL while open */
    int32_t supervisor_pid; /* 0 = not yet spawned */
    uint64_t supervisor_start_ticks;
};

/* Record a new open run (r->run, ended_us and end_reason are ignored) and
 * write its number to *run (may be NULL). GP_ENOENT when there is no job
 * r->job_id. */
int gp_db_run_begin(struct gp_db *db, const struct gp_db_run *r, uint32_t *run,
                    struct gp_diag *diag);

/* Record the supervisor of a run once it is spawned. GP_ENOENT when there
 * is no such run. */
int gp_db_run_set_supervisor(struct gp_db *db, int64_t job_id, uint32_t run,
                             int32_t pid, uint64_t start_ticks,
                             struct gp_diag *diag);

/* Close a run. GP_ENOENT when there is no such run, GP_ESTATE when it is
 * closed already. reason is required ("exited", "preempted", "lost"). */
int gp_db_run_end(struct gp_db *db, int64_t job_id, uint32_t run,
                  int64_t ended_us, const char *reason, struct gp_diag *diag);

/* The runs of job_id (0 = of every job), all or only the open ones, in
 * (job, run) order. */
int gp_db_runs_each(struct gp_db *db, int64_t job_id, bool open_only,
                    int (*fn)(void *priv, const struct gp_db_run *r),
                    void *priv, struct gp_diag *diag);

/* ---- actions: decided, persisted, not yet confirmed -------------------- */

/* The loop writes an action in the same transaction as the state change it
 * carries out, executes it after the commit and then marks it done. After
 * a crash, the undone ones are what may be half-done: reconciliation asks
 * the world before acting again. */
struct gp_db_action {
    int64_t id;              /* assigned by add */
    int64_t job_id;          /* 0 = not about one job */
    const char *kind;        /* required: "start", "stop", "signal", ... */
    int64_t at_us;           /* when it was decided */
    int64_t deadline_us;     /* GP_TIME_NONE = none */
    const char *reason;      /* NULL = none */
    const char *detail_json; /* NULL = none */
    int64_t done_us;         /* GP_TIME_NONE until done */
};

/* Add a (not done) action and write its id to *id (may be NULL). GP_ENOENT
 * when job_id is not 0 and there is no such job. */
int gp_db_action_add(struct gp_db *db, const struct gp_db_action *a,
                     int64_t *id, struct gp_diag *diag);

/* Mark the action id done at done_us. GP_ENOENT when there is no such
 * action, GP_ESTATE when it is done already. */
int gp_db_action_done(struct gp_db *db, int64_t id, int64_t done_us,
                      struct gp_diag *diag);

/* The actions not yet done, in id (decision) order. */
int gp_db_actions_each_undone(struct gp_db *db,
                              int (*fn)(void *priv,
                                        const struct gp_db_action *a),
                              void *priv, struct gp_diag *diag);

/* ---- tenants, nodes ----------------------------------------------------- */

struct gp_db_tenant {
    const char *name;      /* required */
    const char *spec_json; /* required: weight, guarantee, cap, ... */
    int64_t created_us;    /* kept from the first upsert */
    int64_t updated_us;
};
/* Insert or replace a tenant by name (created_us is kept when it exists). */
int gp_db_tenant_upsert(struct gp_db *db, const struct gp_db_tenant *t,
                        struct gp_diag *diag);
/* GP_ENOENT when there is no such tenant. */
int gp_db_tenant_delete(struct gp_db *db, const char *name,
                        struct gp_diag *diag);
/* In name order. */
int gp_db_tenants_each(struct gp_db *db,
                       int (*fn)(void *priv, const struct gp_db_tenant *t),
                       void *priv, struct gp_diag *diag);

struct gp_db_node {
    const char *name;      /* required */
    const char *spec_json; /* required: GPUs, CPUs, memory, ... */
    const char *state;     /* required: "up", "drain", "down", ... */
    int64_t updated_us;
};
int gp_db_node_upsert(struct gp_db *db, const struct gp_db_node *n,
                      struct gp_diag *diag);
/* GP_ENOENT when there is no such node. */
int gp_db_node_delete(struct gp_db *db, const char *name, struct gp_diag *diag);
/* In name order. */
int gp_db_nodes_each(struct gp_db *db,
                     int (*fn)(void *priv, const struct gp_db_node *n),
                     void *priv, struct gp_diag *diag);

/* ---- GPU samples -------------------------------------------------------- */

/* One reading of one GPU. A reading the device does not give is NaN for
 * the doubles (stored as NULL, read back as NaN) and UINT64_MAX for the
 * memory sizes (likewise). */
struct gp_db_gpu_sample {
    int64_t ts_us;
    const char *node; /* required */
    uint32_t gpu;     /* device index */
    double util_pct;
    uint64_t mem_used_mib, mem_total_mib;
    double temp_c;
    double power_w;
};
int gp_db_sample_add(struct gp_db *db, const struct gp_db_gpu_sample *s,
                     struct gp_diag *diag);
/* Samples with from_us <= ts_us < to_us, in time order (then in the order
 * they were added). */
int gp_db_samples_each(struct gp_db *db, int64_t from_us, int64_t to_us,
                       int (*fn)(void *priv, const struct gp_db_gpu_sample *s),
                       void *priv, struct gp_diag *diag);

/* ---- the predictor's history, decayed usage ----------------------------- */

/* One finished job as the predictor learns from it. */
struct gp_db_history {
    const char *user;   /* required */
    const char *name;   /* NULL = "" */
    const char *tenant; /* required */
    uint32_t gpus;
    int64_t runtime_us;
    int64_t gpu_us;
    int64_t end_us;
};
int gp_db_history_add(struct gp_db *db, const struct gp_db_history *h,
                      struct gp_diag *diag);
/* History with end_us >= since_us, oldest first: to feed a new predictor
 * in the order it first learned. */
int gp_db_history_each(struct gp_db *db, int64_t since_us,
                       int (*fn)(void *priv, const struct gp_db_history *h),
                       void *priv, struct gp_diag *diag);

/* A tenant's decayed past usage as of at_us. */
struct gp_db_usage {
    const char *tenant; /* required */
    double decayed_gpu_us;
    int64_t at_us;
};
/* Insert or replace the usage of u->tenant. */
int gp_db_usage_save(struct gp_db *db, const struct gp_db_usage *u,
                     struct gp_diag *diag);
/* In tenant order. */
int gp_db_usage_each(struct gp_db *db,
                     int (*fn)(void *priv, const struct gp_db_usage *u),
                     void *priv, struct gp_diag *diag);

/* ---- meta: small named values -------------------------------------------- */

/* Reserved keys: "store_id", 32 hex digits drawn when the store was
 * created (a restarted daemon can tell it found the same store). The
 * daemon may add its own (its instance id, counters). */

/* Copy the value of key into buf (len bytes, NUL-terminated). GP_ENOENT
 * when there is no such key, GP_ERANGE when buf is too small. */
int gp_db_meta_get(struct gp_db *db, const char *key, char *buf, size_t len,
                   struct gp_diag *diag);
/* Set key to value (both required). */
int gp_db_meta_set(struct gp_db *db, const char *key, const char *value,
                   struct gp_diag *diag);
/* The same for integers, stored as decimal text. gp_db_meta_get_i64 is
 * GP_EPARSE when the value is not an integer. */
int gp_db_meta_get_i64(struct gp_db *db, const char *key, int64_t *value,
                       struct gp_diag *diag);
int gp_db_meta_set_i64(struct gp_db *db, const char *key, int64_t value,
                       struct gp_diag *diag);

/* ---- retention and upkeep ------------------------------------------------ */

/* How long to keep what. 0 = keep forever. */
struct gp_db_retention {
    int64_t jobs_us;    /* ended jobs, with their events, runs and actions,
                           by end_us; and done actions by done_us */
    int64_t samples_us; /* GPU samples, by ts_us */
    int64_t history_us; /* predictor history, by end_us */
    /* at most this many rows of each kind per call, so that a prune in the
     * loop never stalls it (call again to go on); 0 = no limit */
    uint32_t max_rows;
};

/* What a prune removed. */
struct gp_db_pruned {
    uint64_t jobs, events, runs, actions, samples, history;
};

/* Delete what is older than now_us minus each retention. A job that is not
 * ended is never deleted, however old, nor are its events, runs and
 * actions. A write: call it inside a transaction. out may be NULL. */
int gp_db_prune(struct gp_db *db, int64_t now_us,
                const struct gp_db_retention *r, struct gp_db_pruned *out,
                struct gp_diag *diag);

/* Check the file: PRAGMA integrity_check (full) or quick_check, then
 * foreign_key_check. GP_EIO with the first problem in diag. */
int gp_db_check(struct gp_db *db, bool full, struct gp_diag *diag);

/* Copy the WAL into the database and truncate it (for an idle moment or a
 * clean shutdown; SQLite also does this on its own every 1000 pages).
 * GP_ESTATE inside a transaction. */
int gp_db_checkpoint(struct gp_db *db, struct gp_diag *diag);

#endif
