/* batch_refused.c - regression: a batch submit refused part-way left the
 * jobs it had created before the bad one in the daemon's memory.
 *
 * The loop's savepoint took them out of the store, but the core and the
 * job table kept them: they were scheduled without a row, and the next
 * submit was given the same id again (SQLite hands a rolled-back id out
 * again), so one job id stood for two jobs. Once GPUs freed up, both were
 * started as that one job: two open runs of one job in the store.
 *
 * Here, against a real daemon (4 fake GPUs): a blocker holds the 4 GPUs;
 * a batch of a good 2-GPU job (client_id "a") and a bad one (gpus 99) is
 * refused with 400 naming jobs[1].gpus; a single 2-GPU job ("b") follows.
 * Checked: the daemon holds 2 live jobs (the blocker and b), not 3;
 * client_id "a" was not kept (submitting it again creates a job, 201);
 * once the blocker is cancelled, b runs once; after a clean stop the
 * store has exactly one run for b and no job with two open runs.
 *
 * Usage: batch_refused GPUPOOL
 */
#define _XOPEN_SOURCE 700 /* nftw, getpgid (harness.h) */
#include <inttypes.h>
#include <stdarg.h>

#include <jansson.h>
#include <sqlite3.h>

#include "harness.h"

#define LIMIT_S 120.0 /* a bound against a hang, not a timing check */

static struct harness h;
static struct harness *volatile sig_h; /* for h_on_signals */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "batch_refused: FAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nbatch_refused: the state directory is kept: %s\n",
            h.dir);
    h_fini(&h, true);
    exit(1);
}

/* method path body -> status, parsed reply (caller frees) */
static json_t *call(CURL *c, const char *method, const char *path,
                    const char *body, long *status)
{
    char *reply;
    json_t *j;

    if (h_call(c, method, path, body, status, &reply) != CURLE_OK)
        die("%s %s: no answer", method, path);
    j = reply ? json_loads(reply, 0, NULL) : NULL;
    if (!j)
        die("%s %s: HTTP %ld, not JSON: %s", method, path, *status,
            reply ? reply : "");
    free(reply);
    return j;
}

static int64_t submit(CURL *c, const char *body, long want)
{
    long status;
    json_t *j = call(c, "POST", "/v1/jobs", body, &status);
    int64_t id = json_integer_value(json_object_get(j, "id"));

    if (status != want || id <= 0)
        die("submit %s: HTTP %ld (expected %ld), id %" PRId64, body, status,
            want, id);
    json_decref(j);
    return id;
}

static void wait_state(CURL *c, int64_t id, const char *want)
{
    double t0 = h_now_s();
    char path[64];

    snprintf(path, sizeof(path), "/v1/jobs/%" PRId64, id);
    for (;;) {
        long status;
        json_t *j = call(c, "GET", path, NULL, &status);
        const char *st = json_string_value(json_object_get(j, "state"));
        bool ok = st && strcmp(st, want) == 0;

        if (!ok && h_now_s() - t0 > LIMIT_S)
            die("job %" PRId64 " is %s after %.0f s, expected %s", id,
                st ? st : "?", LIMIT_S, want);
        json_decref(j);
        if (ok)
            return;
        h_sleep_us(20000);
    }
}

int main(int argc, char **argv)
{
    int64_t blocker, b, a2;
    long status;
    json_t *j;
    CURL *c;
    int st;

    if (argc != 2) {
        fprintf(stderr, "usage: batch_refused GPUPOOL\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    if (h_init(&h, argv[1], NULL, "batch") != 0)
        return 1;
    sig_h = &h;
    if (h_on_signals(&sig_h, true) != 0)
        die("cannot watch for signals");
    h_set(&h, "backend.gpus=4");
    h_set(&h, "backend.kill_after=1s");
    if (h_start(&h) != 0 || h_wait_up(&h, LIMIT_S) != 0)
        die("the daemon did not come up");
    if (!(c = h_curl(&h)))
        die("curl_easy_init failed");

    blocker = submit(c,
                     "{\"command\": [\"sleep\", \"100000\"], \"gpus\": 4, "
                     "\"client_id\": \"blocker\"}",
                     201);
    wait_state(c, blocker, "running");
    j = call(c, "POST", "/v1/jobs",
             "{\"jobs\": [{\"command\": [\"sleep\", \"0.2\"], \"gpus\": 2, "
             "\"client_id\": \"a\"}, {\"command\": [\"true\"], \"gpus\": 99}]}",
             &status);
    if (status != 400 ||
        strcmp(json_string_value(json_object_get(j, "field"))
                   ? json_string_value(json_object_get(j, "field"))
                   : "",
               "jobs[1].gpus") != 0)
        die("the bad batch: HTTP %ld, field %s (expected 400, jobs[1].gpus)",
            status, json_string_value(json_object_get(j, "field")));
    json_decref(j);
    b = submit(c,
               "{\"command\": [\"sleep\", \"0.2\"], \"gpus\": 2, "
               "\"client_id\": \"b\"}",
               201);
    j = call(c, "GET", "/v1/health", NULL, &status);
    if (json_integer_value(json_object_get(j, "jobs")) != 2)
        die("the daemon holds %" PRId64 " live jobs after the refused "
            "batch, expected 2 (the blocker and job %" PRId64 ")",
            (int64_t)json_integer_value(json_object_get(j, "jobs")), b);
    json_decref(j);

    {
        char path[64];

        snprintf(path, sizeof(path), "/v1/jobs/%" PRId64 "/cancel", blocker);
        json_decref(call(c, "POST", path, "{}", &status));
        if (status != 200)
            die("cancel the blocker: HTTP %ld", status);
    }
    wait_state(c, b, "completed");
    /* "a" was refused with its batch: it is not known, a submit makes it */
    a2 = submit(c,
                "{\"command\": [\"true\"], \"gpus\": 1, \"client_id\": "
                "\"a\"}",
                201);
    if (a2 == b)
        die("client_id a was given job %" PRId64 ", which is b's", a2);
    wait_state(c, a2, "completed");
    curl_easy_cleanup(c);
    st = h_signal_wait(&h, SIGTERM);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("SIGTERM: the daemon ended with status 0x%x", (unsigned)st);

    {
        sqlite3 *db;
        sqlite3_stmt *q;
        int runs_b = -1, twice = -1;

        if (sqlite3_open_v2(h.db, &db, SQLITE_OPEN_READONLY, NULL) !=
                SQLITE_OK ||
            sqlite3_prepare_v2(db,
                               "SELECT (SELECT count(*) FROM runs WHERE "
                               "job_id = ?), (SELECT count(*) FROM (SELECT "
                               "job_id FROM runs WHERE ended_us IS NULL "
                               "GROUP BY job_id HAVING count(*) > 1))",
                               -1, &q, NULL) != SQLITE_OK)
            die("store %s: %s", h.db, sqlite3_errmsg(db));
        sqlite3_bind_int64(q, 1, b);
        if (sqlite3_step(q) == SQLITE_ROW) {
            runs_b = sqlite3_column_int(q, 0);
            twice = sqlite3_column_int(q, 1);
        }
        sqlite3_finalize(q);
        sqlite3_close(db);
        if (runs_b != 1)
            die("job %" PRId64 " (b) has %d runs in the store, expected 1", b,
                runs_b);
        if (twice != 0)
            die("%d jobs have two open runs in the store", twice);
    }
    h_fini(&h, false);
    curl_global_cleanup();
    printf("batch_refused: ok\n");
    return 0;
}
