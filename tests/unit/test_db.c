/* test_db.c - the daemon's store: opening (new, reopened, refused), every
 * write and read round trip, transactions (outside one, rollback,
 * savepoints), uniqueness, prune, and migrations from every old version.
 *
 * Each test gets a fresh folder under $TMPDIR (or /tmp); old stores are
 * built with SQLite directly, running only the first migrations.
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "daemon/db.h"
#include "daemon/db_schema.h"

struct fx {
    char dir[256];
    char path[320];
    struct gp_db *db;
    struct gp_diag diag;
};

static void rm_rf(const char *path)
{
    struct stat st;
    DIR *d;
    struct dirent *e;

    if (lstat(path, &st) != 0)
        return;
    if (S_ISDIR(st.st_mode) && (d = opendir(path))) {
        while ((e = readdir(d))) {
            char sub[512];

            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
            rm_rf(sub);
        }
        closedir(d);
        rmdir(path);
        return;
    }
    unlink(path);
}

static int setup(void **state)
{
    struct fx *f = calloc(1, sizeof(*f));
    const char *tmp = getenv("TMPDIR");

    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "%s/gp-test-db-XXXXXX",
             tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof(f->path), "%s/store.db", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fx *f = *state;

    gp_db_close(f->db);
    rm_rf(f->dir);
    free(f);
    return 0;
}

/* Open f->path with defaults; fail the test with the diag otherwise. */
static void open_ok(struct fx *f)
{
    int rc = gp_db_open(&f->db, f->path, NULL, &f->diag);

    if (rc != GP_OK)
        fail_msg("open: %s: %s: %s", gp_err_name(rc), f->diag.where,
                 f->diag.msg);
}

#define OK(call)                                                               \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != GP_OK)                                                      \
            fail_msg("%s: %s: %s: %s", #call, gp_err_name(rc_), f->diag.where, \
                     f->diag.msg);                                             \
    } while (0)

/* A raw SQLite query's single integer. */
static int64_t raw_int(const char *path, const char *sql)
{
    sqlite3 *s;
    sqlite3_stmt *st;
    int64_t v = -12345;

    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    if (sqlite3_prepare_v2(s, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(s);
    return v;
}

static void raw_exec(const char *path, const char *sql)
{
    sqlite3 *s;
    char *err = NULL;

    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    if (sqlite3_exec(s, sql, NULL, NULL, &err) != SQLITE_OK)
        fail_msg("raw sql: %s: %s", sql, err ? err : "?");
    sqlite3_close(s);
}

static struct gp_db_job sample_job(const char *ext)
{
    struct gp_db_job j = {
        .ext = ext,
        .tenant = "vision",
        .user = "ada",
        .uid = 1000,
        .gid = 100,
        .name = "train-resnet",
        .spec_json = "{\"argv\":[\"python\",\"train.py\"],\"gpus\":2}",
        .state = GP_JOB_PENDING,
        .submit_us = 1000,
        .queued_us = 1000,
        .first_start_us = GP_TIME_NONE,
        .end_us = GP_TIME_NONE,
        .exit_code = GP_DB_NO_EXIT,
        .predicted_us = 3600 * GP_US_PER_S,
        .updated_us = 1000,
    };
    return j;
}

static int64_t insert_job(struct fx *f, const char *ext)
{
    struct gp_db_job j = sample_job(ext);
    int64_t id = 0;

    OK(gp_db_job_insert(f->db, &j, &id, &f->diag));
    return id;
}

static int count_job(void *priv, const struct gp_db_job *j)
{
    (void)j;
    ++*(int *)priv;
    return 0;
}

static int count_jobs(struct fx *f, enum gp_db_which which)
{
    int n = 0;

    OK(gp_db_jobs_each(f->db, which, 0, 0, count_job, &n, &f->diag));
    return n;
}

/* ---- opening ------------------------------------------------------------ */

static void a_new_store_is_created_private_in_a_new_folder(void **state)
{
    struct fx *f = *state;
    struct stat st;
    char dir[300], id[64];

    snprintf(dir, sizeof(dir), "%s/var/lib", f->dir);
    snprintf(f->path, sizeof(f->path), "%s/gpupool.db", dir);
    open_ok(f);
    assert_string_equal(gp_db_path(f->db), f->path);
    assert_int_equal(stat(f->path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(st.st_mode & 0077, 0);
    OK(gp_db_meta_get(f->db, "store_id", id, sizeof(id), &f->diag));
    assert_int_equal(strlen(id), 32);
    OK(gp_db_check(f->db, true, &f->diag));
    gp_db_close(f->db);
    f->db = NULL;
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     gp_db_schema_version());
    assert_int_equal(raw_int(f->path, "PRAGMA application_id"),
                     GP_DB_APPLICATION_ID);
    /* WAL is a property of the file: the raw connection sees it too */
    assert_int_equal(
        raw_int(f->path,
                "SELECT journal_mode = 'wal' FROM pragma_journal_mode"),
        1);
    assert_true(gp_db_schema_version() >= 2);
}

static void a_reopened_store_has_its_rows_and_the_same_store_id(void **state)
{
    struct fx *f = *state;
    char id1[64], id2[64];
    struct gp_db_job j;
    int64_t job;

    open_ok(f);
    OK(gp_db_meta_get(f->db, "store_id", id1, sizeof(id1), &f->diag));
    OK(gp_db_begin(f->db, &f->diag));
    job = insert_job(f, "k1");
    OK(gp_db_commit(f->db, &f->diag));
    gp_db_close(f->db);
    f->db = NULL;

    open_ok(f);
    OK(gp_db_meta_get(f->db, "store_id", id2, sizeof(id2), &f->diag));
    assert_string_equal(id1, id2);
    OK(gp_db_job_get(f->db, job, &j, &f->diag));
    assert_string_equal(j.ext, "k1");
}

static void a_second_open_of_the_same_store_is_refused(void **state)
{
    struct fx *f = *state;
    struct gp_db *other = NULL;

    open_ok(f);
    assert_int_equal(gp_db_open(&other, f->path, NULL, &f->diag), GP_ESTATE);
    assert_null(other);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "in use"));
    gp_db_close(f->db);
    f->db = NULL;
    /* released on close */
    open_ok(f);
}

static void a_store_from_a_newer_gpupool_is_refused_unchanged(void **state)
{
    struct fx *f = *state;
    char sql[128], want[64];

    snprintf(sql, sizeof(sql),
             "CREATE TABLE future(x); PRAGMA application_id = %d; "
             "PRAGMA user_version = %u;",
             GP_DB_APPLICATION_ID, gp_db_schema_version() + 7);
    raw_exec(f->path, sql);
    assert_int_equal(gp_db_open(&f->db, f->path, NULL, &f->diag), GP_ERANGE);
    assert_null(f->db);
    assert_string_equal(f->diag.where, f->path);
    snprintf(want, sizeof(want), "version %u", gp_db_schema_version() + 7);
    assert_non_null(strstr(f->diag.msg, want));
    snprintf(want, sizeof(want), "up to %u", gp_db_schema_version());
    assert_non_null(strstr(f->diag.msg, want));
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                     gp_db_schema_version() + 7);
    assert_int_equal(raw_int(f->path,
                             "SELECT count(*) FROM sqlite_master WHERE name = "
                             "'jobs'"),
                     0);
}

static void a_file_that_is_not_sqlite_is_refused_unchanged(void **state)
{
    struct fx *f = *state;
    const char text[] = "[server]\nsocket = /run/gpupool.sock\n"
                        "this is a config file, not a database, and it is "
                        "long enough to fill SQLite's header\n";
    char back[sizeof(text)];
    FILE *fp = fopen(f->path, "w");

    assert_non_null(fp);
    fputs(text, fp);
    fclose(fp);
    assert_int_equal(gp_db_open(&f->db, f->path, NULL, &f->diag), GP_EINVAL);
    assert_null(f->db);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "not a gpupool store"));
    fp = fopen(f->path, "r");
    assert_non_null(fp);
    assert_int_equal(fread(back, 1, sizeof(back), fp), sizeof(text) - 1);
    fclose(fp);
    assert_memory_equal(back, text, sizeof(text) - 1);
}

static void an_sqlite_database_of_another_application_is_refused(void **state)
{
    struct fx *f = *state;

    raw_exec(f->path, "CREATE TABLE jobs(id INTEGER PRIMARY KEY, what TEXT);"
                      "INSERT INTO jobs(what) VALUES ('mine');");
    assert_int_equal(gp_db_open(&f->db, f->path, NULL, &f->diag), GP_EINVAL);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "another application"));
    /* left alone: no schema of ours, journal mode as it was */
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master"), 1);
    assert_int_equal(
        raw_int(f->path,
                "SELECT journal_mode = 'delete' FROM pragma_journal_mode"),
        1);
}

static void an_empty_file_becomes_a_new_store(void **state)
{
    struct fx *f = *state;
    FILE *fp = fopen(f->path, "w");

    assert_non_null(fp);
    fclose(fp);
    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    insert_job(f, NULL);
    OK(gp_db_commit(f->db, &f->diag));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);
}

static void open_refuses_bad_arguments(void **state)
{
    struct fx *f = *state;
    struct gp_db_options o = {.sync = (enum gp_db_sync)7};

    assert_int_equal(gp_db_open(&f->db, "", NULL, &f->diag), GP_EINVAL);
    assert_int_equal(gp_db_open(&f->db, NULL, NULL, &f->diag), GP_EINVAL);
    assert_int_equal(gp_db_open(&f->db, f->path, &o, &f->diag), GP_EINVAL);
    assert_non_null(strstr(f->diag.msg, "synchronous"));
    /* a folder where the file should be */
    assert_int_equal(gp_db_open(&f->db, f->dir, NULL, &f->diag), GP_EIO);
    assert_string_equal(f->diag.where, f->dir);
    assert_null(f->db);
}

/* ---- transactions ---------------------------------------------------------
 */

static void every_write_outside_a_transaction_is_refused(void **state)
{
    struct fx *f = *state;
    struct gp_db_job j = sample_job("x");
    struct gp_db_event ev = {.job_id = 1, .ts_us = 1, .kind = "submitted"};
    struct gp_db_run r = {.job_id = 1, .node = "n1", .devices = "0"};
    struct gp_db_action a = {.kind = "start", .deadline_us = GP_TIME_NONE};
    struct gp_db_tenant t = {.name = "t", .spec_json = "{}"};
    struct gp_db_node n = {.name = "n", .spec_json = "{}", .state = "up"};
    struct gp_db_gpu_sample s = {.node = "n", .util_pct = 1};
    struct gp_db_history h = {.user = "u", .tenant = "t"};
    struct gp_db_usage u = {.tenant = "t"};
    struct gp_db_retention keep = {.jobs_us = 1};
    int64_t id = -7;

    open_ok(f);
    assert_false(gp_db_in_transaction(f->db));
    assert_int_equal(gp_db_job_insert(f->db, &j, &id, &f->diag), GP_ESTATE);
    assert_int_equal(id, -7);
    assert_non_null(strstr(f->diag.msg, "outside a transaction"));
    j.id = 1;
    assert_int_equal(gp_db_job_update(f->db, &j, NULL), GP_ESTATE);
    assert_int_equal(gp_db_event_append(f->db, &ev, NULL, NULL), GP_ESTATE);
    assert_int_equal(gp_db_run_begin(f->db, &r, NULL, NULL), GP_ESTATE);
    assert_int_equal(gp_db_run_set_supervisor(f->db, 1, 1, 5, 6, NULL),
                     GP_ESTATE);
    assert_int_equal(gp_db_run_end(f->db, 1, 1, 9, "exited", NULL), GP_ESTATE);
    assert_int_equal(gp_db_action_add(f->db, &a, NULL, NULL), GP_ESTATE);
    assert_int_equal(gp_db_action_done(f->db, 1, 9, NULL), GP_ESTATE);
    assert_int_equal(gp_db_tenant_upsert(f->db, &t, NULL), GP_ESTATE);
    assert_int_equal(gp_db_tenant_delete(f->db, "t", NULL), GP_ESTATE);
    assert_int_equal(gp_db_node_upsert(f->db, &n, NULL), GP_ESTATE);
    assert_int_equal(gp_db_node_delete(f->db, "n", NULL), GP_ESTATE);
    assert_int_equal(gp_db_sample_add(f->db, &s, NULL), GP_ESTATE);
    assert_int_equal(gp_db_history_add(f->db, &h, NULL), GP_ESTATE);
    assert_int_equal(gp_db_usage_save(f->db, &u, NULL), GP_ESTATE);
    assert_int_equal(gp_db_meta_set(f->db, "k", "v", NULL), GP_ESTATE);
    assert_int_equal(gp_db_prune(f->db, 10, &keep, NULL, NULL), GP_ESTATE);
    assert_int_equal(gp_db_savepoint(f->db, NULL), GP_ESTATE);
    assert_int_equal(gp_db_commit(f->db, NULL), GP_ESTATE);
    assert_int_equal(gp_db_rollback(f->db, NULL), GP_ESTATE);
    assert_int_equal(count_jobs(f, GP_DB_ALL), 0);
}

static void a_transaction_cannot_be_begun_twice(void **state)
{
    struct fx *f = *state;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    assert_true(gp_db_in_transaction(f->db));
    assert_int_equal(gp_db_begin(f->db, &f->diag), GP_ESTATE);
    OK(gp_db_commit(f->db, &f->diag));
    assert_false(gp_db_in_transaction(f->db));
    assert_int_equal(gp_db_checkpoint(f->db, &f->diag), GP_OK);
}

static void a_rollback_leaves_nothing_of_the_transaction(void **state)
{
    struct fx *f = *state;
    struct gp_db_tenant t = {.name = "t", .spec_json = "{}"};
    struct gp_db_gpu_sample s = {.ts_us = 5, .node = "n", .util_pct = 50};
    char buf[16];
    int64_t kept, id;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    kept = insert_job(f, "kept");
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_begin(f->db, &f->diag));
    id = insert_job(f, "gone");
    struct gp_db_event ev = {.job_id = id, .ts_us = 2, .kind = "submitted"};
    OK(gp_db_event_append(f->db, &ev, NULL, &f->diag));
    OK(gp_db_tenant_upsert(f->db, &t, &f->diag));
    OK(gp_db_sample_add(f->db, &s, &f->diag));
    OK(gp_db_meta_set(f->db, "k", "v", &f->diag));
    /* a read inside sees the uncommitted writes */
    assert_int_equal(count_jobs(f, GP_DB_ALL), 2);
    OK(gp_db_rollback(f->db, &f->diag));

    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);
    assert_int_equal(gp_db_job_find_ext(f->db, "gone", &id, NULL), GP_ENOENT);
    OK(gp_db_job_find_ext(f->db, "kept", &id, &f->diag));
    assert_int_equal(id, kept);
    assert_int_equal(gp_db_meta_get(f->db, "k", buf, sizeof(buf), NULL),
                     GP_ENOENT);

    /* and so does closing with a transaction open */
    OK(gp_db_begin(f->db, &f->diag));
    insert_job(f, "unacknowledged");
    gp_db_close(f->db);
    f->db = NULL;
    open_ok(f);
    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);
}

static void a_savepoint_rollback_undoes_only_its_request(void **state)
{
    struct fx *f = *state;
    int64_t a, b;

    open_ok(f);
    assert_int_equal(gp_db_savepoint_release(f->db, NULL), GP_ESTATE);
    OK(gp_db_begin(f->db, &f->diag));
    assert_int_equal(gp_db_savepoint_release(f->db, NULL), GP_ESTATE);
    assert_int_equal(gp_db_savepoint_rollback(f->db, NULL), GP_ESTATE);

    OK(gp_db_savepoint(f->db, &f->diag));
    a = insert_job(f, "a");
    OK(gp_db_savepoint_release(f->db, &f->diag));

    OK(gp_db_savepoint(f->db, &f->diag));
    assert_int_equal(gp_db_savepoint(f->db, NULL), GP_ESTATE);
    insert_job(f, "b-half");
    OK(gp_db_savepoint_rollback(f->db, &f->diag));

    OK(gp_db_savepoint(f->db, &f->diag));
    b = insert_job(f, "c");
    OK(gp_db_savepoint_release(f->db, &f->diag));
    OK(gp_db_commit(f->db, &f->diag));

    assert_int_equal(count_jobs(f, GP_DB_ALL), 2);
    assert_int_equal(gp_db_job_find_ext(f->db, "b-half", &b, NULL), GP_ENOENT);
    OK(gp_db_job_find_ext(f->db, "a", &b, &f->diag));
    assert_int_equal(b, a);
}

/* Under a file size limit (a full disk, to SQLite: its writes fail with
 * EFBIG), insert up to n jobs of 64 KiB in one transaction and commit.
 * Returns the first error, from an insert (*at_insert) or the commit. */
static int fill_past_the_limit(struct fx *f, int n, bool *at_insert)
{
    struct rlimit old, lim;
    void (*old_handler)(int);
    struct gp_db_job j = sample_job(NULL);
    char *big = malloc(64 * 1024);
    int rc = GP_OK;

    assert_non_null(big);
    memset(big, 'x', 64 * 1024 - 1);
    big[64 * 1024 - 1] = '\0';
    j.spec_json = big;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 512 * 1024;
    old_handler = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    OK(gp_db_begin(f->db, &f->diag));
    for (int i = 0; i < n && rc == GP_OK; i++)
        rc = gp_db_job_insert(f->db, &j, NULL, &f->diag);
    *at_insert = rc != GP_OK;
    if (rc == GP_OK)
        rc = gp_db_commit(f->db, &f->diag);
    else
        assert_int_equal(gp_db_commit(f->db, NULL), GP_EIO);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_handler);
    free(big);
    return rc;
}

static void a_full_disk_fails_the_batch_and_stores_none_of_it(void **state)
{
    struct fx *f = *state;
    bool at_insert;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    insert_job(f, "before");
    OK(gp_db_commit(f->db, &f->diag));

    /* 1 MiB fits SQLite's page cache: the commit is what writes */
    assert_int_equal(fill_past_the_limit(f, 16, &at_insert), GP_EIO);
    assert_false(at_insert);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "commit"));
    assert_false(gp_db_in_transaction(f->db));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);

    /* 8 MiB does not: an insert spills to the WAL and fails, and nothing
     * of the batch can be committed after that */
    assert_int_equal(fill_past_the_limit(f, 128, &at_insert), GP_EIO);
    assert_true(at_insert);
    assert_non_null(strstr(f->diag.msg, "insert job"));
    assert_false(gp_db_in_transaction(f->db));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);

    /* the store goes on once there is room again */
    OK(gp_db_begin(f->db, &f->diag));
    insert_job(f, "after");
    OK(gp_db_commit(f->db, &f->diag));
    OK(gp_db_check(f->db, true, &f->diag));
    gp_db_close(f->db);
    f->db = NULL;
    open_ok(f);
    assert_int_equal(count_jobs(f, GP_DB_ALL), 2);
}

/* ---- jobs -----------------------------------------------------------------
 */

static void a_job_round_trips_through_insert_update_and_get(void **state)
{
    struct fx *f = *state;
    struct gp_db_job j = sample_job("req-1"), got;
    int64_t id;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    OK(gp_db_job_insert(f->db, &j, &id, &f->diag));
    OK(gp_db_commit(f->db, &f->diag));
    assert_true(id >= 1);

    OK(gp_db_job_get(f->db, id, &got, &f->diag));
    assert_int_equal(got.id, id);
    assert_string_equal(got.ext, "req-1");
    assert_string_equal(got.tenant, "vision");
    assert_string_equal(got.user, "ada");
    assert_int_equal(got.uid, 1000);
    assert_int_equal(got.gid, 100);
    assert_string_equal(got.name, "train-resnet");
    assert_string_equal(got.spec_json, j.spec_json);
    assert_int_equal(got.state, GP_JOB_PENDING);
    assert_int_equal(got.submit_us, 1000);
    assert_int_equal(got.queued_us, 1000);
    assert_int_equal(got.first_start_us, GP_TIME_NONE);
    assert_int_equal(got.end_us, GP_TIME_NONE);
    assert_int_equal(got.exit_code, GP_DB_NO_EXIT);
    assert_null(got.reason);
    assert_int_equal(got.predicted_us, 3600 * GP_US_PER_S);

    j.id = id;
    j.state = GP_JOB_FAILED;
    j.first_start_us = 2000;
    j.end_us = 9000;
    j.restarts = 2;
    j.preemptions = 3;
    j.exit_code = -9;
    j.reason = "killed by signal 9";
    j.gpu_us = 14000;
    j.work_done_us = 6000;
    j.updated_us = 9000;
    j.tenant = "ignored: immutable";
    OK(gp_db_begin(f->db, &f->diag));
    OK(gp_db_job_update(f->db, &j, &f->diag));
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_job_get(f->db, id, &got, &f->diag));
    assert_int_equal(got.state, GP_JOB_FAILED);
    assert_string_equal(got.tenant, "vision");
    assert_int_equal(got.first_start_us, 2000);
    assert_int_equal(got.end_us, 9000);
    assert_int_equal(got.restarts, 2);
    assert_int_equal(got.preemptions, 3);
    assert_int_equal(got.exit_code, -9);
    assert_string_equal(got.reason, "killed by signal 9");
    assert_int_equal(got.gpu_us, 14000);
    assert_int_equal(got.work_done_us, 6000);
    assert_int_equal(got.updated_us, 9000);
    assert_int_equal(count_jobs(f, GP_DB_LIVE), 0);
    assert_int_equal(count_jobs(f, GP_DB_ENDED), 1);

    assert_int_equal(gp_db_job_get(f->db, id + 1, &got, &f->diag), GP_ENOENT);
    OK(gp_db_begin(f->db, &f->diag));
    j.id = id + 100;
    assert_int_equal(gp_db_job_update(f->db, &j, &f->diag), GP_ENOENT);
    assert_non_null(strstr(f->diag.msg, "no such job"));
    OK(gp_db_commit(f->db, &f->diag));
}

struct collected {
    int64_t ids[64];
    int n;
    int stop_at; /* return 1 when n reaches it; 0 = never */
};

static int collect_job(void *priv, const struct gp_db_job *j)
{
    struct collected *c = priv;

    c->ids[c->n++] = j->id;
    return c->stop_at && c->n == c->stop_at ? 42 : 0;
}

static void jobs_are_listed_live_or_ended_in_id_order_by_pages(void **state)
{
    struct fx *f = *state;
    struct collected c = {0};
    int64_t ids[6];

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    for (int i = 0; i < 6; i++) {
        struct gp_db_job j = sample_job(NULL);

        if (i % 2) {
            j.state = GP_JOB_COMPLETED;
            j.end_us = 5000;
        }
        OK(gp_db_job_insert(f->db, &j, &ids[i], &f->diag));
        if (i)
            assert_true(ids[i] > ids[i - 1]);
    }
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_jobs_each(f->db, GP_DB_LIVE, 0, 0, collect_job, &c, &f->diag));
    assert_int_equal(c.n, 3);
    assert_int_equal(c.ids[0], ids[0]);
    assert_int_equal(c.ids[1], ids[2]);
    assert_int_equal(c.ids[2], ids[4]);

    memset(&c, 0, sizeof(c));
    OK(gp_db_jobs_each(f->db, GP_DB_ENDED, ids[1], 0, collect_job, &c,
                       &f->diag));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.ids[0], ids[3]);

    memset(&c, 0, sizeof(c));
    OK(gp_db_jobs_each(f->db, GP_DB_ALL, ids[1], 2, collect_job, &c, &f->diag));
    assert_int_equal(c.n, 2);
    assert_int_equal(c.ids[0], ids[2]);
    assert_int_equal(c.ids[1], ids[3]);

    /* the callback's own value stops the walk and comes back */
    memset(&c, 0, sizeof(c));
    c.stop_at = 4;
    assert_int_equal(
        gp_db_jobs_each(f->db, GP_DB_ALL, 0, 0, collect_job, &c, &f->diag), 42);
    assert_int_equal(c.n, 4);
}

static void a_duplicate_ext_is_refused_and_the_batch_goes_on(void **state)
{
    struct fx *f = *state;
    struct gp_db_job j = sample_job("retry-me");
    int64_t first, id = -1;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    first = insert_job(f, "retry-me");
    assert_int_equal(gp_db_job_insert(f->db, &j, &id, &f->diag), GP_EEXIST);
    assert_int_equal(id, -1);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "retry-me"));
    assert_non_null(strstr(f->diag.msg, "UNIQUE"));
    assert_true(gp_db_in_transaction(f->db));
    insert_job(f, "other");
    /* no ext is no key: any number of jobs without one */
    insert_job(f, NULL);
    insert_job(f, "");
    OK(gp_db_commit(f->db, &f->diag));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 4);
    OK(gp_db_job_find_ext(f->db, "retry-me", &id, &f->diag));
    assert_int_equal(id, first);
    assert_int_equal(gp_db_job_find_ext(f->db, "nope", &id, &f->diag),
                     GP_ENOENT);
}

static void job_ids_are_never_reused_after_a_prune(void **state)
{
    struct fx *f = *state;
    struct gp_db_job j = sample_job(NULL);
    struct gp_db_retention r = {.jobs_us = 10};
    struct gp_db_pruned p;
    int64_t a, b;

    open_ok(f);
    j.state = GP_JOB_COMPLETED;
    j.end_us = 100;
    OK(gp_db_begin(f->db, &f->diag));
    OK(gp_db_job_insert(f->db, &j, &a, &f->diag));
    OK(gp_db_prune(f->db, 1000, &r, &p, &f->diag));
    assert_int_equal(p.jobs, 1);
    OK(gp_db_commit(f->db, &f->diag));
    gp_db_close(f->db);
    f->db = NULL;
    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    b = insert_job(f, NULL);
    OK(gp_db_commit(f->db, &f->diag));
    assert_true(b > a);
}

static void bad_job_arguments_are_refused_naming_the_field(void **state)
{
    struct fx *f = *state;
    struct gp_db_job j;
    char *big;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    j = sample_job(NULL);
    j.tenant = NULL;
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    assert_non_null(strstr(f->diag.msg, "tenant is missing"));
    j = sample_job(NULL);
    j.user = "";
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    assert_non_null(strstr(f->diag.msg, "user"));
    j = sample_job(NULL);
    j.spec_json = NULL;
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    assert_non_null(strstr(f->diag.msg, "spec_json"));
    j = sample_job(NULL);
    j.state = GP_JOB_COMPLETED; /* without end_us */
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    assert_non_null(strstr(f->diag.msg, "completed"));
    j = sample_job(NULL);
    j.end_us = 5; /* pending with an end */
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    j = sample_job(NULL);
    j.state = (enum gp_job_state)99;
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    assert_non_null(strstr(f->diag.msg, "99"));
    j = sample_job(NULL);
    j.submit_us = -5;
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_EINVAL);
    assert_int_equal(gp_db_job_insert(f->db, NULL, NULL, &f->diag), GP_EINVAL);

    big = malloc(GP_DB_TEXT_MAX + 2);
    assert_non_null(big);
    memset(big, 'x', GP_DB_TEXT_MAX + 1);
    big[GP_DB_TEXT_MAX + 1] = '\0';
    j = sample_job(NULL);
    j.spec_json = big;
    assert_int_equal(gp_db_job_insert(f->db, &j, NULL, &f->diag), GP_ERANGE);
    assert_non_null(strstr(f->diag.msg, "spec_json"));
    big[GP_DB_TEXT_MAX] = '\0'; /* exactly the limit is fine */
    OK(gp_db_job_insert(f->db, &j, NULL, &f->diag));
    free(big);
    OK(gp_db_commit(f->db, &f->diag));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);
}

static void a_row_with_an_unknown_state_is_a_parse_error_naming_it(void **state)
{
    struct fx *f = *state;
    struct gp_db_job got;
    int64_t id;
    int n = 0;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    id = insert_job(f, NULL);
    OK(gp_db_commit(f->db, &f->diag));
    gp_db_close(f->db);
    f->db = NULL;
    raw_exec(f->path, "UPDATE jobs SET state = 'hibernating'");
    open_ok(f);
    assert_int_equal(
        gp_db_jobs_each(f->db, GP_DB_ALL, 0, 0, count_job, &n, &f->diag),
        GP_EPARSE);
    assert_int_equal(n, 0);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "hibernating"));
    assert_int_equal(gp_db_job_get(f->db, id, &got, &f->diag), GP_EPARSE);
}

static int count_event(void *priv, const struct gp_db_event *ev)
{
    (void)ev;
    ++*(int *)priv;
    return 0;
}

struct reentry {
    struct fx *f;
    int64_t id;
    int calls;
};

static int reenter(void *priv, const struct gp_db_job *j)
{
    struct reentry *r = priv;
    struct fx *f = r->f;
    struct gp_db_event ev = {.job_id = j->id, .ts_us = 1, .kind = "x"};
    struct gp_db_job got;
    int n = 0;

    r->calls++;
    /* reading is fine, writing and re-entering the same walk are not */
    OK(gp_db_job_get(f->db, j->id, &got, &f->diag));
    assert_int_equal(got.id, j->id);
    OK(gp_db_events_each(f->db, j->id, count_event, &n, &f->diag));
    assert_int_equal(n, 0);
    assert_int_equal(gp_db_event_append(f->db, &ev, NULL, &f->diag), GP_ESTATE);
    assert_non_null(strstr(f->diag.msg, "iteration"));
    assert_int_equal(gp_db_commit(f->db, NULL), GP_ESTATE);
    assert_int_equal(
        gp_db_jobs_each(f->db, GP_DB_ALL, 0, 0, count_job, &n, &f->diag),
        GP_ESTATE);
    return 0;
}

static void a_callback_may_read_the_store_but_not_write_it(void **state)
{
    struct fx *f = *state;
    struct reentry r = {.f = f};

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    r.id = insert_job(f, NULL);
    OK(gp_db_jobs_each(f->db, GP_DB_ALL, 0, 0, reenter, &r, &f->diag));
    assert_int_equal(r.calls, 1);
    /* the transaction is still usable after the walk */
    insert_job(f, NULL);
    OK(gp_db_commit(f->db, &f->diag));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 2);
}

/* ---- events, runs, actions
 * ---------------------------------------------------- */

struct ev_list {
    uint32_t seq[8];
    char kind[8][16];
    int has_detail[8];
    int n;
};

static int collect_event(void *priv, const struct gp_db_event *ev)
{
    struct ev_list *l = priv;

    l->seq[l->n] = ev->seq;
    snprintf(l->kind[l->n], sizeof(l->kind[0]), "%s", ev->kind);
    l->has_detail[l->n] = ev->detail_json != NULL;
    l->n++;
    return 0;
}

static void events_are_numbered_per_job_and_read_back_in_order(void **state)
{
    struct fx *f = *state;
    const char *kinds[] = {"submitted", "started", "preempted", "started"};
    struct ev_list l = {0};
    int64_t a, b;
    uint32_t seq;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    a = insert_job(f, NULL);
    b = insert_job(f, NULL);
    for (int i = 0; i < 4; i++) {
        struct gp_db_event ev = {.job_id = a,
                                 .ts_us = 10 * i,
                                 .kind = kinds[i],
                                 .detail_json =
                                     i == 1 ? "{\"gpus\":\"0,1\"}" : NULL};

        OK(gp_db_event_append(f->db, &ev, &seq, &f->diag));
        assert_int_equal(seq, i + 1);
    }
    struct gp_db_event evb = {.job_id = b, .ts_us = 5, .kind = "submitted"};
    OK(gp_db_event_append(f->db, &evb, &seq, &f->diag));
    assert_int_equal(seq, 1);

    struct gp_db_event ghost = {.job_id = b + 50, .ts_us = 5, .kind = "x"};
    assert_int_equal(gp_db_event_append(f->db, &ghost, &seq, &f->diag),
                     GP_ENOENT);
    assert_non_null(strstr(f->diag.msg, "job"));
    ghost.job_id = a;
    ghost.kind = NULL;
    assert_int_equal(gp_db_event_append(f->db, &ghost, &seq, &f->diag),
                     GP_EINVAL);
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_events_each(f->db, a, collect_event, &l, &f->diag));
    assert_int_equal(l.n, 4);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(l.seq[i], i + 1);
        assert_string_equal(l.kind[i], kinds[i]);
        assert_int_equal(l.has_detail[i], i == 1);
    }
}

struct run_list {
    struct gp_db_run r[8];
    char node[8][16], devices[8][16], reason[8][16];
    int n;
};

static int collect_run(void *priv, const struct gp_db_run *r)
{
    struct run_list *l = priv;

    l->r[l->n] = *r;
    snprintf(l->node[l->n], 16, "%s", r->node);
    snprintf(l->devices[l->n], 16, "%s", r->devices);
    snprintf(l->reason[l->n], 16, "%s", r->end_reason ? r->end_reason : "-");
    l->n++;
    return 0;
}

static void runs_round_trip_and_end_only_once(void **state)
{
    struct fx *f = *state;
    struct run_list l = {0};
    int64_t a, b;
    uint32_t run;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    a = insert_job(f, NULL);
    b = insert_job(f, NULL);
    struct gp_db_run r = {.job_id = a,
                          .node = "gpu-01",
                          .devices = "0,1",
                          .milli = 1000,
                          .started_us = 100};
    OK(gp_db_run_begin(f->db, &r, &run, &f->diag));
    assert_int_equal(run, 1);
    OK(gp_db_run_set_supervisor(f->db, a, 1, 4242, 987654321ull, &f->diag));
    OK(gp_db_run_end(f->db, a, 1, 200, "preempted", &f->diag));
    assert_int_equal(gp_db_run_end(f->db, a, 1, 300, "exited", &f->diag),
                     GP_ESTATE);
    assert_int_equal(gp_db_run_end(f->db, a, 7, 300, "exited", &f->diag),
                     GP_ENOENT);
    assert_int_equal(gp_db_run_set_supervisor(f->db, a, 7, 1, 1, &f->diag),
                     GP_ENOENT);
    r.started_us = 250;
    r.devices = "3";
    OK(gp_db_run_begin(f->db, &r, &run, &f->diag));
    assert_int_equal(run, 2);
    struct gp_db_run rb = {.job_id = b,
                           .node = "gpu-02",
                           .devices = "5",
                           .milli = 250,
                           .started_us = 260,
                           .supervisor_pid = 77,
                           .supervisor_start_ticks = 5};
    OK(gp_db_run_begin(f->db, &rb, &run, &f->diag));
    assert_int_equal(run, 1);
    rb.job_id = b + 10;
    assert_int_equal(gp_db_run_begin(f->db, &rb, &run, &f->diag), GP_ENOENT);
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_runs_each(f->db, a, false, collect_run, &l, &f->diag));
    assert_int_equal(l.n, 2);
    assert_int_equal(l.r[0].run, 1);
    assert_string_equal(l.node[0], "gpu-01");
    assert_string_equal(l.devices[0], "0,1");
    assert_int_equal(l.r[0].milli, 1000);
    assert_int_equal(l.r[0].started_us, 100);
    assert_int_equal(l.r[0].ended_us, 200);
    assert_string_equal(l.reason[0], "preempted");
    assert_int_equal(l.r[0].supervisor_pid, 4242);
    assert_int_equal(l.r[0].supervisor_start_ticks, 987654321ull);
    assert_int_equal(l.r[1].ended_us, GP_TIME_NONE);
    assert_string_equal(l.reason[1], "-");

    /* what a restarted daemon asks: every open run */
    memset(&l, 0, sizeof(l));
    OK(gp_db_runs_each(f->db, 0, true, collect_run, &l, &f->diag));
    assert_int_equal(l.n, 2);
    assert_int_equal(l.r[0].job_id, a);
    assert_int_equal(l.r[0].run, 2);
    assert_int_equal(l.r[1].job_id, b);
    assert_int_equal(l.r[1].milli, 250);
    assert_int_equal(l.r[1].supervisor_pid, 77);

    memset(&l, 0, sizeof(l));
    OK(gp_db_runs_each(f->db, 0, false, collect_run, &l, &f->diag));
    assert_int_equal(l.n, 3);
    memset(&l, 0, sizeof(l));
    OK(gp_db_runs_each(f->db, a, true, collect_run, &l, &f->diag));
    assert_int_equal(l.n, 1);
}

struct action_list {
    struct gp_db_action a[8];
    char kind[8][16];
    int n;
};

static int collect_action(void *priv, const struct gp_db_action *a)
{
    struct action_list *l = priv;

    l->a[l->n] = *a;
    snprintf(l->kind[l->n], 16, "%s", a->kind);
    l->n++;
    return 0;
}

static void actions_stay_undone_until_marked_done(void **state)
{
    struct fx *f = *state;
    struct action_list l = {0};
    int64_t job, a1, a2, a3;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    job = insert_job(f, NULL);
    struct gp_db_action a = {.job_id = job,
                             .kind = "start",
                             .at_us = 10,
                             .deadline_us = 70,
                             .reason = "fits now",
                             .detail_json = "{\"node\":\"n1\"}",
                             .done_us = 999}; /* ignored */
    OK(gp_db_action_add(f->db, &a, &a1, &f->diag));
    a.kind = "stop";
    a.deadline_us = GP_TIME_NONE;
    a.reason = NULL;
    a.detail_json = NULL;
    OK(gp_db_action_add(f->db, &a, &a2, &f->diag));
    a.job_id = 0; /* not about a job */
    a.kind = "drain";
    OK(gp_db_action_add(f->db, &a, &a3, &f->diag));
    assert_true(a1 < a2 && a2 < a3);
    a.job_id = job + 5;
    assert_int_equal(gp_db_action_add(f->db, &a, NULL, &f->diag), GP_ENOENT);
    OK(gp_db_action_done(f->db, a2, 20, &f->diag));
    assert_int_equal(gp_db_action_done(f->db, a2, 21, &f->diag), GP_ESTATE);
    assert_int_equal(gp_db_action_done(f->db, a3 + 9, 21, &f->diag), GP_ENOENT);
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_actions_each_undone(f->db, collect_action, &l, &f->diag));
    assert_int_equal(l.n, 2);
    assert_int_equal(l.a[0].id, a1);
    assert_int_equal(l.a[0].job_id, job);
    assert_string_equal(l.kind[0], "start");
    assert_int_equal(l.a[0].at_us, 10);
    assert_int_equal(l.a[0].deadline_us, 70);
    assert_int_equal(l.a[0].done_us, GP_TIME_NONE);
    assert_int_equal(l.a[1].id, a3);
    assert_int_equal(l.a[1].job_id, 0);
    assert_int_equal(l.a[1].deadline_us, GP_TIME_NONE);
    assert_string_equal(l.kind[1], "drain");
}

/* ---- tenants, nodes, samples, history, usage, meta
 * -------------------------------- */

struct named_list {
    char name[8][16], extra[8][32];
    int64_t t1[8], t2[8];
    int n;
};

static int collect_tenant(void *priv, const struct gp_db_tenant *t)
{
    struct named_list *l = priv;

    snprintf(l->name[l->n], 16, "%s", t->name);
    snprintf(l->extra[l->n], 32, "%s", t->spec_json);
    l->t1[l->n] = t->created_us;
    l->t2[l->n] = t->updated_us;
    l->n++;
    return 0;
}

static int collect_node(void *priv, const struct gp_db_node *n)
{
    struct named_list *l = priv;

    snprintf(l->name[l->n], 16, "%s", n->name);
    snprintf(l->extra[l->n], 32, "%s/%s", n->state, n->spec_json);
    l->t1[l->n] = n->updated_us;
    l->n++;
    return 0;
}

static void tenants_and_nodes_are_upserted_and_deleted(void **state)
{
    struct fx *f = *state;
    struct named_list l = {0};
    struct gp_db_tenant t = {.name = "vision",
                             .spec_json = "{\"weight\":1}",
                             .created_us = 10,
                             .updated_us = 10};
    struct gp_db_node n = {.name = "gpu-01",
                           .spec_json = "{\"gpus\":8}",
                           .state = "up",
                           .updated_us = 5};

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    OK(gp_db_tenant_upsert(f->db, &t, &f->diag));
    t.spec_json = "{\"weight\":2}";
    t.created_us = 99; /* kept from the first */
    t.updated_us = 20;
    OK(gp_db_tenant_upsert(f->db, &t, &f->diag));
    t.name = "audio";
    OK(gp_db_tenant_upsert(f->db, &t, &f->diag));
    t.name = "gone";
    OK(gp_db_tenant_upsert(f->db, &t, &f->diag));
    OK(gp_db_tenant_delete(f->db, "gone", &f->diag));
    assert_int_equal(gp_db_tenant_delete(f->db, "gone", &f->diag), GP_ENOENT);
    assert_non_null(strstr(f->diag.msg, "gone"));
    t.spec_json = NULL;
    assert_int_equal(gp_db_tenant_upsert(f->db, &t, &f->diag), GP_EINVAL);

    OK(gp_db_node_upsert(f->db, &n, &f->diag));
    n.state = "drain";
    n.updated_us = 6;
    OK(gp_db_node_upsert(f->db, &n, &f->diag));
    n.name = "gpu-00";
    n.state = "down";
    OK(gp_db_node_upsert(f->db, &n, &f->diag));
    assert_int_equal(gp_db_node_delete(f->db, "gpu-99", &f->diag), GP_ENOENT);
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_tenants_each(f->db, collect_tenant, &l, &f->diag));
    assert_int_equal(l.n, 2);
    assert_string_equal(l.name[0], "audio");
    assert_string_equal(l.name[1], "vision");
    assert_string_equal(l.extra[1], "{\"weight\":2}");
    assert_int_equal(l.t1[1], 10);
    assert_int_equal(l.t2[1], 20);

    memset(&l, 0, sizeof(l));
    OK(gp_db_nodes_each(f->db, collect_node, &l, &f->diag));
    assert_int_equal(l.n, 2);
    assert_string_equal(l.name[0], "gpu-00");
    assert_string_equal(l.extra[0], "down/{\"gpus\":8}");
    assert_string_equal(l.name[1], "gpu-01");
    assert_string_equal(l.extra[1], "drain/{\"gpus\":8}");
    assert_int_equal(l.t1[1], 6);
}

struct sample_list {
    struct gp_db_gpu_sample s[8];
    int n;
};

static int collect_sample(void *priv, const struct gp_db_gpu_sample *s)
{
    struct sample_list *l = priv;

    l->s[l->n] = *s;
    l->s[l->n].node = NULL; /* not valid after the call */
    l->n++;
    return 0;
}

static void gpu_samples_round_trip_with_unknown_readings(void **state)
{
    struct fx *f = *state;
    struct sample_list l = {0};

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    for (int i = 0; i < 4; i++) {
        struct gp_db_gpu_sample s = {
            .ts_us = 100 * (4 - i), /* out of order: read back by time */
            .node = "gpu-01",
            .gpu = (uint32_t)i,
            .util_pct = 25.5 * i,
            .mem_used_mib = i == 2 ? UINT64_MAX : 1000u * i,
            .mem_total_mib = 81920,
            .temp_c = 40 + i,
            .power_w = i == 2 ? NAN : 300.25,
        };
        OK(gp_db_sample_add(f->db, &s, &f->diag));
    }
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_samples_each(f->db, 200, 400, collect_sample, &l, &f->diag));
    assert_int_equal(l.n, 2); /* 200 and 300; 400 is past the end */
    assert_int_equal(l.s[0].ts_us, 200);
    assert_int_equal(l.s[0].gpu, 2);
    assert_true(isnan(l.s[0].power_w));
    assert_int_equal(l.s[0].mem_used_mib, UINT64_MAX);
    assert_true(fabs(l.s[0].util_pct - 51.0) < 1e-9);
    assert_int_equal(l.s[1].ts_us, 300);
    assert_int_equal(l.s[1].gpu, 1);
    assert_int_equal(l.s[1].mem_used_mib, 1000);
    assert_int_equal(l.s[1].mem_total_mib, 81920);
    assert_true(fabs(l.s[1].power_w - 300.25) < 1e-9);
    assert_true(fabs(l.s[1].temp_c - 41) < 1e-9);
}

struct hist_list {
    char user[8][16];
    int64_t end[8], runtime[8];
    uint32_t gpus[8];
    int n;
};

static int collect_history(void *priv, const struct gp_db_history *h)
{
    struct hist_list *l = priv;

    snprintf(l->user[l->n], 16, "%s/%s/%s", h->user, h->name, h->tenant);
    l->end[l->n] = h->end_us;
    l->runtime[l->n] = h->runtime_us;
    l->gpus[l->n] = h->gpus;
    l->n++;
    return 0;
}

struct usage_list {
    char tenant[8][16];
    double gpu_us[8];
    int64_t at[8];
    int n;
};

static int collect_usage(void *priv, const struct gp_db_usage *u)
{
    struct usage_list *l = priv;

    snprintf(l->tenant[l->n], 16, "%s", u->tenant);
    l->gpu_us[l->n] = u->decayed_gpu_us;
    l->at[l->n] = u->at_us;
    l->n++;
    return 0;
}

static void history_and_usage_round_trip(void **state)
{
    struct fx *f = *state;
    struct hist_list hl = {0};
    struct usage_list ul = {0};
    struct gp_db_history h = {
        .user = "ada", .name = "a", .tenant = "t", .gpus = 8};
    struct gp_db_usage u = {.tenant = "vision", .decayed_gpu_us = 1.5e12};

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    for (int i = 0; i < 3; i++) {
        h.end_us = 300 - 100 * i;
        h.runtime_us = 10 + i;
        OK(gp_db_history_add(f->db, &h, &f->diag));
    }
    h.name = NULL;
    h.end_us = 50;
    OK(gp_db_history_add(f->db, &h, &f->diag));
    h.user = NULL;
    assert_int_equal(gp_db_history_add(f->db, &h, &f->diag), GP_EINVAL);

    OK(gp_db_usage_save(f->db, &u, &f->diag));
    u.decayed_gpu_us = 2.25e12;
    u.at_us = 77;
    OK(gp_db_usage_save(f->db, &u, &f->diag));
    u.tenant = "audio";
    u.decayed_gpu_us = 0;
    OK(gp_db_usage_save(f->db, &u, &f->diag));
    u.decayed_gpu_us = NAN;
    assert_int_equal(gp_db_usage_save(f->db, &u, &f->diag), GP_EINVAL);
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_history_each(f->db, 100, collect_history, &hl, &f->diag));
    assert_int_equal(hl.n, 3);
    assert_int_equal(hl.end[0], 100);
    assert_int_equal(hl.runtime[0], 12);
    assert_int_equal(hl.end[2], 300);
    assert_int_equal(hl.gpus[1], 8);
    assert_string_equal(hl.user[0], "ada/a/t");
    memset(&hl, 0, sizeof(hl));
    OK(gp_db_history_each(f->db, 0, collect_history, &hl, &f->diag));
    assert_int_equal(hl.n, 4);
    assert_string_equal(hl.user[0], "ada//t");

    OK(gp_db_usage_each(f->db, collect_usage, &ul, &f->diag));
    assert_int_equal(ul.n, 2);
    assert_string_equal(ul.tenant[0], "audio");
    assert_string_equal(ul.tenant[1], "vision");
    assert_true(ul.gpu_us[1] == 2.25e12);
    assert_int_equal(ul.at[1], 77);
}

static void meta_values_round_trip(void **state)
{
    struct fx *f = *state;
    char buf[8];
    int64_t v;

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    OK(gp_db_meta_set(f->db, "instance", "abc", &f->diag));
    OK(gp_db_meta_set(f->db, "instance", "abcd", &f->diag));
    OK(gp_db_meta_set_i64(f->db, "rounds", INT64_MIN, &f->diag));
    OK(gp_db_meta_set(f->db, "long", "0123456789", &f->diag));
    assert_int_equal(gp_db_meta_set(f->db, "k", NULL, &f->diag), GP_EINVAL);
    assert_int_equal(gp_db_meta_set(f->db, "", "v", &f->diag), GP_EINVAL);
    OK(gp_db_commit(f->db, &f->diag));

    OK(gp_db_meta_get(f->db, "instance", buf, sizeof(buf), &f->diag));
    assert_string_equal(buf, "abcd");
    OK(gp_db_meta_get_i64(f->db, "rounds", &v, &f->diag));
    assert_true(v == INT64_MIN);
    assert_int_equal(gp_db_meta_get(f->db, "long", buf, sizeof(buf), &f->diag),
                     GP_ERANGE);
    assert_int_equal(gp_db_meta_get_i64(f->db, "instance", &v, &f->diag),
                     GP_EPARSE);
    assert_non_null(strstr(f->diag.msg, "instance"));
    assert_int_equal(gp_db_meta_get(f->db, "none", buf, sizeof(buf), &f->diag),
                     GP_ENOENT);
}

/* ---- prune
 * -------------------------------------------------------------------------- */

static void prune_removes_old_ended_jobs_and_never_a_live_one(void **state)
{
    struct fx *f = *state;
    const int64_t day = 86400 * GP_US_PER_S, now = 100 * day;
    struct gp_db_retention r = {
        .jobs_us = 30 * day, .samples_us = day, .history_us = 60 * day};
    struct gp_db_pruned p;
    int64_t old_live, old_ended, new_ended, ids[5], done_act, undone_act;
    struct gp_db_job j;
    struct gp_db_event ev = {.ts_us = 1, .kind = "submitted"};
    struct gp_db_run run = {.node = "n", .devices = "0", .milli = 1000};
    struct gp_db_action act = {.kind = "start", .deadline_us = GP_TIME_NONE};
    struct gp_db_gpu_sample s = {.node = "n", .util_pct = 1};
    struct gp_db_history h = {.user = "u", .tenant = "t"};
    struct ev_list el = {0};

    open_ok(f);
    OK(gp_db_begin(f->db, &f->diag));
    /* submitted long ago and still running: never pruned */
    j = sample_job("old-live");
    j.submit_us = 1;
    j.state = GP_JOB_RUNNING;
    OK(gp_db_job_insert(f->db, &j, &old_live, &f->diag));
    j = sample_job("old-ended");
    j.state = GP_JOB_COMPLETED;
    j.end_us = now - 31 * day;
    OK(gp_db_job_insert(f->db, &j, &old_ended, &f->diag));
    j.ext = "new-ended";
    j.end_us = now - 29 * day;
    OK(gp_db_job_insert(f->db, &j, &new_ended, &f->diag));
    for (int i = 0; i < 3; i++) {
        int64_t id = i == 0 ? old_live : i == 1 ? old_ended : new_ended;

        ev.job_id = run.job_id = act.job_id = id;
        OK(gp_db_event_append(f->db, &ev, NULL, &f->diag));
        OK(gp_db_event_append(f->db, &ev, NULL, &f->diag));
        OK(gp_db_run_begin(f->db, &run, NULL, &f->diag));
        OK(gp_db_action_add(f->db, &act, NULL, &f->diag));
    }
    /* a done action of no job, old: pruned by done_us */
    act.job_id = 0;
    OK(gp_db_action_add(f->db, &act, &done_act, &f->diag));
    OK(gp_db_action_done(f->db, done_act, now - 40 * day, &f->diag));
    OK(gp_db_action_add(f->db, &act, &undone_act, &f->diag));
    for (int i = 0; i < 4; i++) {
        s.ts_us = now - day - 10 + 10 * i; /* two older than a day */
        OK(gp_db_sample_add(f->db, &s, &f->diag));
        h.end_us = now - 61 * day + 2 * i * day; /* one older than 60 d */
        OK(gp_db_history_add(f->db, &h, &f->diag));
    }
    OK(gp_db_prune(f->db, now, &r, &p, &f->diag));
    OK(gp_db_commit(f->db, &f->diag));

    assert_int_equal(p.jobs, 1);
    assert_int_equal(p.events, 2);
    assert_int_equal(p.runs, 1);
    assert_int_equal(p.actions, 2); /* old_ended's and the done one */
    assert_int_equal(p.samples, 1);
    assert_int_equal(p.history, 1);
    assert_int_equal(gp_db_job_get(f->db, old_ended, &j, NULL), GP_ENOENT);
    OK(gp_db_job_get(f->db, old_live, &j, &f->diag));
    OK(gp_db_job_get(f->db, new_ended, &j, &f->diag));
    OK(gp_db_events_each(f->db, old_live, collect_event, &el, &f->diag));
    assert_int_equal(el.n, 2);
    OK(gp_db_check(f->db, true, &f->diag));

    /* a prune far in the future still keeps the live job; max_rows
     * bounds each call */
    OK(gp_db_begin(f->db, &f->diag));
    for (int i = 0; i < 5; i++) {
        j = sample_job(NULL);
        j.state = GP_JOB_CANCELLED;
        j.end_us = 10 + i;
        OK(gp_db_job_insert(f->db, &j, &ids[i], &f->diag));
    }
    r.max_rows = 2;
    OK(gp_db_prune(f->db, now * 10, &r, &p, &f->diag));
    assert_int_equal(p.jobs, 2);
    assert_int_equal(gp_db_job_get(f->db, ids[0], &j, NULL), GP_ENOENT);
    OK(gp_db_job_get(f->db, ids[2], &j, &f->diag));
    r.max_rows = 0;
    OK(gp_db_prune(f->db, now * 10, &r, &p, &f->diag));
    assert_int_equal(p.jobs, 4);
    /* retention 0 keeps forever */
    r = (struct gp_db_retention){0};
    OK(gp_db_prune(f->db, INT64_MAX, &r, &p, &f->diag));
    assert_int_equal(p.jobs + p.samples + p.history, 0);
    r.jobs_us = -1;
    assert_int_equal(gp_db_prune(f->db, now, &r, &p, &f->diag), GP_EINVAL);
    OK(gp_db_commit(f->db, &f->diag));
    assert_int_equal(count_jobs(f, GP_DB_ALL), 1);
    OK(gp_db_job_get(f->db, old_live, &j, &f->diag));
    assert_int_equal(j.state, GP_JOB_RUNNING);
}

/* ---- migrations
 * ------------------------------------------------------------------------ */

/* A store at version v as an older gpupool left it: migrations 1..v only,
 * with rows written in version 1's shape. */
static void build_old_store(const char *path, unsigned v)
{
    sqlite3 *s;
    char sql[128];

    assert_int_equal(sqlite3_open(path, &s), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(s, "PRAGMA journal_mode = WAL", NULL, NULL, NULL),
        SQLITE_OK);
    for (unsigned i = 0; i < v; i++)
        assert_int_equal(
            sqlite3_exec(s, gp__db_migrations[i], NULL, NULL, NULL), SQLITE_OK);
    if (v >= 1) {
        snprintf(sql, sizeof(sql), "PRAGMA application_id = %d",
                 GP_DB_APPLICATION_ID);
        assert_int_equal(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
        assert_int_equal(
            sqlite3_exec(
                s,
                "INSERT INTO jobs(ext, tenant, user_name, uid, gid, name, "
                "spec_json, state, submit_us, queued_us, restarts, "
                "preemptions, gpu_us, work_done_us, predicted_us, "
                "updated_us) VALUES ('old-1', 'vision', 'ada', 1, 2, 'n', "
                "'{}', 'running', 5, 5, 0, 0, 0, 0, 0, 5);"
                "INSERT INTO job_events VALUES (1, 1, 5, 'submitted', NULL);"
                "INSERT INTO runs VALUES (1, 1, 'gpu-01', '0', 1000, 6, NULL, "
                "NULL, 321, 654);"
                "INSERT INTO tenants VALUES ('vision', '{}', 1, 2);"
                "INSERT INTO usage VALUES ('vision', 12.5, 3);"
                "INSERT INTO actions(job_id, kind, at_us) VALUES (1, "
                "'start', 6);"
                "INSERT INTO meta VALUES ('next_round', '17');",
                NULL, NULL, NULL),
            SQLITE_OK);
    }
    snprintf(sql, sizeof(sql), "PRAGMA user_version = %u", v);
    assert_int_equal(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
}

static int count_run(void *priv, const struct gp_db_run *r)
{
    assert_int_equal(r->supervisor_pid, 321);
    assert_int_equal(r->supervisor_start_ticks, 654);
    ++*(int *)priv;
    return 0;
}

static int count_action(void *priv, const struct gp_db_action *a)
{
    (void)a;
    ++*(int *)priv;
    return 0;
}

static void migrations_from_every_old_version_keep_the_rows(void **state)
{
    struct fx *f = *state;

    for (unsigned v = 0; v < gp_db_schema_version(); v++) {
        struct gp_db_job j;
        int64_t id, n64;
        int nruns = 0, nact = 0;

        snprintf(f->path, sizeof(f->path), "%s/v%u.db", f->dir, v);
        build_old_store(f->path, v);
        open_ok(f);
        if (v >= 1) {
            OK(gp_db_job_find_ext(f->db, "old-1", &id, &f->diag));
            OK(gp_db_job_get(f->db, id, &j, &f->diag));
            assert_int_equal(j.state, GP_JOB_RUNNING);
            assert_string_equal(j.user, "ada");
            assert_int_equal(count_jobs(f, GP_DB_LIVE), 1);
            OK(gp_db_runs_each(f->db, 0, true, count_run, &nruns, &f->diag));
            assert_int_equal(nruns, 1);
            OK(gp_db_actions_each_undone(f->db, count_action, &nact, &f->diag));
            assert_int_equal(nact, 1);
            OK(gp_db_meta_get_i64(f->db, "next_round", &n64, &f->diag));
            assert_int_equal(n64, 17);
        }
        /* the migrated store takes new writes, and ids go on */
        OK(gp_db_begin(f->db, &f->diag));
        id = insert_job(f, "new");
        OK(gp_db_commit(f->db, &f->diag));
        assert_int_equal(id, v >= 1 ? 2 : 1);
        OK(gp_db_check(f->db, true, &f->diag));
        gp_db_close(f->db);
        f->db = NULL;
        assert_int_equal(raw_int(f->path, "PRAGMA user_version"),
                         gp_db_schema_version());
        /* version 2's indexes are there */
        assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master "
                                          "WHERE name = 'jobs_end'"),
                         1);
    }
}

static void a_failing_migration_is_rolled_back_and_named(void **state)
{
    struct fx *f = *state;

    build_old_store(f->path, 1);
    /* a table in the way of version 2's index */
    raw_exec(f->path, "CREATE TABLE jobs_end(x)");
    assert_int_equal(gp_db_open(&f->db, f->path, NULL, &f->diag), GP_EIO);
    assert_null(f->db);
    assert_string_equal(f->diag.where, f->path);
    assert_non_null(strstr(f->diag.msg, "migrate to version 2"));
    assert_non_null(strstr(f->diag.msg, "jobs_end"));
    assert_int_equal(raw_int(f->path, "PRAGMA user_version"), 1);
    assert_int_equal(raw_int(f->path, "SELECT count(*) FROM sqlite_master "
                                      "WHERE name = 'jobs_tenant_state'"),
                     0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
        T(a_new_store_is_created_private_in_a_new_folder),
        T(a_reopened_store_has_its_rows_and_the_same_store_id),
        T(a_second_open_of_the_same_store_is_refused),
        T(a_store_from_a_newer_gpupool_is_refused_unchanged),
        T(a_file_that_is_not_sqlite_is_refused_unchanged),
        T(an_sqlite_database_of_another_application_is_refused),
        T(an_empty_file_becomes_a_new_store),
        T(open_refuses_bad_arguments),
        T(every_write_outside_a_transaction_is_refused),
        T(a_transaction_cannot_be_begun_twice),
        T(a_rollback_leaves_nothing_of_the_transaction),
        T(a_savepoint_rollback_undoes_only_its_request),
        T(a_full_disk_fails_the_batch_and_stores_none_of_it),
        T(a_job_round_trips_through_insert_update_and_get),
        T(jobs_are_listed_live_or_ended_in_id_order_by_pages),
        T(a_duplicate_ext_is_refused_and_the_batch_goes_on),
        T(job_ids_are_never_reused_after_a_prune),
        T(bad_job_arguments_are_refused_naming_the_field),
        T(a_row_with_an_unknown_state_is_a_parse_error_naming_it),
        T(a_callback_may_read_the_store_but_not_write_it),
        T(events_are_numbered_per_job_and_read_back_in_order),
        T(runs_round_trip_and_end_only_once),
        T(actions_stay_undone_until_marked_done),
        T(tenants_and_nodes_are_upserted_and_deleted),
        T(gpu_samples_round_trip_with_unknown_readings),
        T(history_and_usage_round_trip),
        T(meta_values_round_trip),
        T(prune_removes_old_ended_jobs_and_never_a_live_one),
        T(migrations_from_every_old_version_keep_the_rows),
        T(a_failing_migration_is_rolled_back_and_named),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
