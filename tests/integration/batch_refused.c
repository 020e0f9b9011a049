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
#include <sqlite3.h>

#include "regress.h"

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
    c = r_setup("batch_refused", argv[1], "batch");

    blocker = r_submit(c,
                       "{\"command\": [\"sleep\", \"100000\"], \"gpus\": 4, "
                       "\"client_id\": \"blocker\"}",
                       201);
    r_wait_state(c, blocker, "running");
    j = r_call(
        c, "POST", "/v1/jobs",
        "{\"jobs\": [{\"command\": [\"sleep\", \"0.2\"], \"gpus\": 2, "
        "\"client_id\": \"a\"}, {\"command\": [\"true\"], \"gpus\": 99}]}",
        &status);
    if (status != 400 ||
        strcmp(json_string_value(json_object_get(j, "field"))
                   ? json_string_value(json_object_get(j, "field"))
                   : "",
               "jobs[1].gpus") != 0)
        r_die("the bad batch: HTTP %ld, field %s (expected 400, jobs[1].gpus)",
              status, json_string_value(json_object_get(j, "field")));
    json_decref(j);
    b = r_submit(c,
                 "{\"command\": [\"sleep\", \"0.2\"], \"gpus\": 2, "
                 "\"client_id\": \"b\"}",
                 201);
    j = r_call(c, "GET", "/v1/health", NULL, &status);
    if (json_integer_value(json_object_get(j, "jobs")) != 2)
        r_die("the daemon holds %" PRId64 " live jobs after the refused "
              "batch, expected 2 (the blocker and job %" PRId64 ")",
              (int64_t)json_integer_value(json_object_get(j, "jobs")), b);
    json_decref(j);

    {
        char path[64];

        snprintf(path, sizeof(path), "/v1/jobs/%" PRId64 "/cancel", blocker);
        json_decref(r_call(c, "POST", path, "{}", &status));
        if (status != 200)
            r_die("cancel the blocker: HTTP %ld", status);
    }
    r_wait_state(c, b, "completed");
    /* "a" was refused with its batch: it is not known, a submit makes it */
    a2 = r_submit(c,
                  "{\"command\": [\"true\"], \"gpus\": 1, \"client_id\": "
                  "\"a\"}",
                  201);
    if (a2 == b)
        r_die("client_id a was given job %" PRId64 ", which is b's", a2);
    r_wait_state(c, a2, "completed");
    curl_easy_cleanup(c);
    st = h_signal_wait(&r_h, SIGTERM);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        r_die("SIGTERM: the daemon ended with status 0x%x", (unsigned)st);

    {
        sqlite3 *db;
        sqlite3_stmt *q;
        int runs_b = -1, twice = -1;

        if (sqlite3_open_v2(r_h.db, &db, SQLITE_OPEN_READONLY, NULL) !=
                SQLITE_OK ||
            sqlite3_prepare_v2(db,
                               "SELECT (SELECT count(*) FROM runs WHERE "
                               "job_id = ?), (SELECT count(*) FROM (SELECT "
                               "job_id FROM runs WHERE ended_us IS NULL "
                               "GROUP BY job_id HAVING count(*) > 1))",
                               -1, &q, NULL) != SQLITE_OK)
            r_die("store %s: %s", r_h.db, sqlite3_errmsg(db));
        sqlite3_bind_int64(q, 1, b);
        if (sqlite3_step(q) == SQLITE_ROW) {
            runs_b = sqlite3_column_int(q, 0);
            twice = sqlite3_column_int(q, 1);
        }
        sqlite3_finalize(q);
        sqlite3_close(db);
        if (runs_b != 1)
            r_die("job %" PRId64 " (b) has %d runs in the store, expected 1", b,
                  runs_b);
        if (twice != 0)
            r_die("%d jobs have two open runs in the store", twice);
    }
    h_fini(&r_h, false);
    curl_global_cleanup();
    printf("batch_refused: ok\n");
    return 0;
}
