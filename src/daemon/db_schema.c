/* db_schema.c - the store's schema, as numbered migrations.
 *
 * Version = index + 1. Step 1 is the schema as first shipped; later steps
 * change it. Never edit a shipped step: add one (and its test in
 * tests/unit/test_db.c, which builds a store at every old version and
 * opens it with the current code).
 *
 * Tables are STRICT (SQLite >= 3.37): a value of the wrong type is refused
 * instead of being stored as whatever it was, so a bug in the daemon cannot
 * leave rows a restarted daemon misreads.
 */
#include "daemon/db_schema.h"

const char *const gp__db_migrations[] = {
    /* 1: the schema */
    "CREATE TABLE meta ("
    "  key TEXT PRIMARY KEY NOT NULL,"
    "  value TEXT NOT NULL"
    ") WITHOUT ROWID, STRICT;"
    "INSERT INTO meta(key, value)"
    "  VALUES ('store_id', lower(hex(randomblob(16))));"

    "CREATE TABLE tenants ("
    "  name TEXT PRIMARY KEY NOT NULL,"
    "  spec_json TEXT NOT NULL,"
    "  created_us INTEGER NOT NULL,"
    "  updated_us INTEGER NOT NULL"
    ") STRICT;"

    /* AUTOINCREMENT: a public job id is never reused, not even the
     * highest one after a prune deleted it */
    "CREATE TABLE jobs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  ext TEXT UNIQUE,"
    "  tenant TEXT NOT NULL,"
    "  user_name TEXT NOT NULL,"
    "  uid INTEGER NOT NULL,"
    "  gid INTEGER NOT NULL,"
    "  name TEXT NOT NULL,"
    "  spec_json TEXT NOT NULL,"
    "  state TEXT NOT NULL,"
    "  submit_us INTEGER NOT NULL,"
    "  queued_us INTEGER,"
    "  first_start_us INTEGER,"
    "  end_us INTEGER,"
    "  restarts INTEGER NOT NULL,"
    "  preemptions INTEGER NOT NULL,"
    "  exit_code INTEGER,"
    "  reason TEXT,"
    "  gpu_us INTEGER NOT NULL,"
    "  work_done_us INTEGER NOT NULL,"
    "  predicted_us INTEGER NOT NULL,"
    "  updated_us INTEGER NOT NULL"
    ") STRICT;"

    "CREATE TABLE job_events ("
    "  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    "  seq INTEGER NOT NULL,"
    "  ts_us INTEGER NOT NULL,"
    "  kind TEXT NOT NULL,"
    "  detail_json TEXT,"
    "  PRIMARY KEY (job_id, seq)"
    ") WITHOUT ROWID, STRICT;"

    "CREATE TABLE runs ("
    "  job_id INTEGER NOT NULL REFERENCES jobs(id) ON DELETE CASCADE,"
    "  run INTEGER NOT NULL,"
    "  node TEXT NOT NULL,"
    "  devices TEXT NOT NULL,"
    "  milli INTEGER NOT NULL,"
    "  started_us INTEGER NOT NULL,"
    "  ended_us INTEGER,"
    "  end_reason TEXT,"
    "  supervisor_pid INTEGER NOT NULL,"
    "  supervisor_start_ticks INTEGER NOT NULL,"
    "  PRIMARY KEY (job_id, run)"
    ") WITHOUT ROWID, STRICT;"

    "CREATE TABLE nodes ("
    "  name TEXT PRIMARY KEY NOT NULL,"
    "  spec_json TEXT NOT NULL,"
    "  state TEXT NOT NULL,"
    "  updated_us INTEGER NOT NULL"
    ") STRICT;"

    "CREATE TABLE gpu_samples ("
    "  ts_us INTEGER NOT NULL,"
    "  node TEXT NOT NULL,"
    "  gpu INTEGER NOT NULL,"
    "  util_pct REAL,"
    "  mem_used_mib INTEGER,"
    "  mem_total_mib INTEGER,"
    "  temp_c REAL,"
    "  power_w REAL"
    ") STRICT;"
    "CREATE INDEX gpu_samples_ts ON gpu_samples(ts_us);"

    "CREATE TABLE history ("
    "  user_name TEXT NOT NULL,"
    "  name TEXT NOT NULL,"
    "  tenant TEXT NOT NULL,"
    "  gpus INTEGER NOT NULL,"
    "  runtime_us INTEGER NOT NULL,"
    "  gpu_us INTEGER NOT NULL,"
    "  end_us INTEGER NOT NULL"
    ") STRICT;"

    "CREATE TABLE usage ("
    "  tenant TEXT PRIMARY KEY NOT NULL,"
    "  decayed_gpu_us REAL NOT NULL,"
    "  at_us INTEGER NOT NULL"
    ") STRICT;"

    "CREATE TABLE actions ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job_id INTEGER REFERENCES jobs(id) ON DELETE CASCADE,"
    "  kind TEXT NOT NULL,"
    "  at_us INTEGER NOT NULL,"
    "  deadline_us INTEGER,"
    "  reason TEXT,"
    "  detail_json TEXT,"
    "  done_us INTEGER"
    ") STRICT;",

    /* 2: indexes for what the daemon asks often. A restarted daemon loads
     * the jobs not ended (end_us IS NULL) and the open runs; the prune
     * walks ended jobs by end_us and history by end_us; the API lists a
     * tenant's jobs by state. */
    "CREATE INDEX jobs_end ON jobs(end_us);"
    "CREATE INDEX jobs_tenant_state ON jobs(tenant, state);"
    "CREATE INDEX runs_open ON runs(job_id, run) WHERE ended_us IS NULL;"
    "CREATE INDEX actions_undone ON actions(id) WHERE done_us IS NULL;"
    "CREATE INDEX actions_done ON actions(done_us) WHERE done_us IS NOT NULL;"
    "CREATE INDEX history_end ON history(end_us);",
};

const size_t gp__db_nmigrations =
    sizeof(gp__db_migrations) / sizeof(gp__db_migrations[0]);
