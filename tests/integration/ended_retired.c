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
#define WAITING 300

#include "regress.h"

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
    c = r_setup("ended_retired", argv[1], "retired");
    blocker =
        r_submit(c, "{\"command\": [\"sleep\", \"100000\"], \"gpus\": 3}", 201);
    r_wait_state(c, blocker, "running");

    /* waiting jobs, cancelled */
    len += (size_t)sprintf(batch + len, "{\"jobs\": [");
    for (i = 0; i < WAITING; i++)
        len += (size_t)sprintf(batch + len,
                               "%s{\"command\": [\"true\"], \"gpus\": 4}",
                               i ? ", " : "");
    sprintf(batch + len, "]}");
    j = r_expect(c, "POST", "/v1/jobs", batch, 201);
    json_array_foreach(json_object_get(j, "jobs"), i, v)
    {
        char path[64];

        snprintf(path, sizeof(path), "/v1/jobs/%" PRId64 "/cancel",
                 (int64_t)json_integer_value(json_object_get(v, "id")));
        json_decref(r_expect(c, "POST", path, "{}", 200));
    }
    json_decref(j);
    /* jobs that run and complete, and one rejected */
    for (i = 0; i < 5; i++)
        ran[i] = r_submit(c, "{\"command\": [\"true\"], \"gpus\": 1}", 201);
    for (i = 0; i < 5; i++)
        r_wait_state(c, ran[i], "completed");
    json_decref(r_expect(c, "POST", "/v1/jobs",
                         "{\"command\": [\"true\"], \"gpus\": 8}", 422));

    j = r_expect(c, "GET", "/v1/health", NULL, 200);
    if (json_integer_value(json_object_get(j, "jobs")) != 1 ||
        json_integer_value(json_object_get(j, "core_jobs")) != 1)
        r_die("after %d jobs ended: health says jobs %" PRId64
              ", core_jobs %" PRId64 "; expected 1 and 1 (the blocker): "
              "ended jobs stay in the core",
              WAITING + 6,
              (int64_t)json_integer_value(json_object_get(j, "jobs")),
              (int64_t)json_integer_value(json_object_get(j, "core_jobs")));
    json_decref(j);
    curl_easy_cleanup(c);
    h_fini(&r_h, false);
    curl_global_cleanup();
    printf("ended_retired: ok\n");
    return 0;
}
