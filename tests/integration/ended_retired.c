/* ended_retired.c - regression: the daemon kept every ended job in its
 * scheduler core for good.
 *
 * The store holds an ended job's record; the core only needs the jobs
 * that are not over. The daemon never retired them (gp_core_retire), so
 * its memory grew by a few hundred bytes with every job that passed
 * through: 1 million jobs, some 400 MiB (bench/bench_daemon --case
 * memory).
 *
 * (In the ASan build it also caught a cancel of a waiting job reading the
 * daemon's record of the job after the cancel had freed it.)
 *
 * Here, against a real daemon (4 fake GPUs, a blocker holding 3): 300
 * waiting jobs cancelled, 5 jobs that run and complete, one rejected (8
 * GPUs on a 4-GPU node). Checked: GET /v1/health says core_jobs 1 and
 * jobs 1 (the blocker), not 307.
 *
 * Usage: ended_retired GPUPOOL
 */
#define _XOPEN_SOURCE 700 /* nftw, getpgid (harness.h) */
#include <inttypes.h>
#include <stdarg.h>

#include <jansson.h>

#include "harness.h"

#define LIMIT_S 120.0 /* a bound against a hang, not a timing check */
#define WAITING 300

static struct harness h;
static struct harness *volatile sig_h; /* for h_on_signals */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ended_retired: FAIL: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nended_retired: the state directory is kept: %s\n",
            h.dir);
    h_fini(&h, true);
    exit(1);
}

static json_t *call(CURL *c, const char *method, const char *path,
                    const char *body, long want)
{
    long status;
    char *reply;
    json_t *j;

    if (h_call(c, method, path, body, &status, &reply) != CURLE_OK)
        die("%s %s: no answer", method, path);
    j = reply ? json_loads(reply, 0, NULL) : NULL;
    if (!j || status != want)
        die("%s %s: HTTP %ld (expected %ld): %s", method, path, status, want,
            reply ? reply : "");
    free(reply);
    return j;
}

static int64_t submit(CURL *c, const char *body)
{
    json_t *j = call(c, "POST", "/v1/jobs", body, 201);
    int64_t id = json_integer_value(json_object_get(j, "id"));

    json_decref(j);
    return id;
}

static void wait_state(CURL *c, int64_t id, const char *want)
{
    double t0 = h_now_s();
    char path[64];

    snprintf(path, sizeof(path), "/v1/jobs/%" PRId64, id);
    for (;;) {
        json_t *j = call(c, "GET", path, NULL, 200);
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
    static char batch[WAITING * 64 + 32];
    int64_t blocker, ran[5];
    size_t len = 0, i;
    json_t *j, *v;
    CURL *c;

    if (argc != 2) {
        fprintf(stderr, "usage: ended_retired GPUPOOL\n");
        return 2;
    }
    curl_global_init(CURL_GLOBAL_ALL);
    if (h_init(&h, argv[1], NULL, "retired") != 0)
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
    blocker = submit(c, "{\"command\": [\"sleep\", \"100000\"], \"gpus\": 3}");
    wait_state(c, blocker, "running");

    /* waiting jobs, cancelled */
    len += (size_t)sprintf(batch + len, "{\"jobs\": [");
    for (i = 0; i < WAITING; i++)
        len += (size_t)sprintf(batch + len,
                               "%s{\"command\": [\"true\"], \"gpus\": 4}",
                               i ? ", " : "");
    sprintf(batch + len, "]}");
    j = call(c, "POST", "/v1/jobs", batch, 201);
    json_array_foreach(json_object_get(j, "jobs"), i, v)
    {
        char path[64];

        snprintf(path, sizeof(path), "/v1/jobs/%" PRId64 "/cancel",
                 (int64_t)json_integer_value(json_object_get(v, "id")));
        json_decref(call(c, "POST", path, "{}", 200));
    }
    json_decref(j);
    /* jobs that run and complete, and one rejected */
    for (i = 0; i < 5; i++)
        ran[i] = submit(c, "{\"command\": [\"true\"], \"gpus\": 1}");
    for (i = 0; i < 5; i++)
        wait_state(c, ran[i], "completed");
    json_decref(call(c, "POST", "/v1/jobs",
                     "{\"command\": [\"true\"], \"gpus\": 8}", 422));

    j = call(c, "GET", "/v1/health", NULL, 200);
    if (json_integer_value(json_object_get(j, "jobs")) != 1 ||
        json_integer_value(json_object_get(j, "core_jobs")) != 1)
        die("after %d jobs ended: health says jobs %" PRId64
            ", core_jobs %" PRId64 "; expected 1 and 1 (the blocker): "
            "ended jobs stay in the core",
            WAITING + 6,
            (int64_t)json_integer_value(json_object_get(j, "jobs")),
            (int64_t)json_integer_value(json_object_get(j, "core_jobs")));
    json_decref(j);
    curl_easy_cleanup(c);
    h_fini(&h, false);
    curl_global_cleanup();
    printf("ended_retired: ok\n");
    return 0;
}
