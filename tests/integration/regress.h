/* regress.h - what the small regression programs against a real daemon
 * share (batch_refused.c, ended_retired.c): a daemon with 4 fake GPUs up,
 * JSON calls that end the test on no answer, and waiting for a job's
 * state. On failure the program says why, keeps the state directory for a
 * look, and exits 1.
 *
 * Header-only, like harness.h: include it once, after defining
 * _XOPEN_SOURCE 700, and call r_setup first.
 */
#ifndef GPUPOOL_TEST_REGRESS_H
#define GPUPOOL_TEST_REGRESS_H

#include <inttypes.h>
#include <stdarg.h>

#include <jansson.h>

#include "harness.h"

#define R_LIMIT_S 120.0 /* a bound against a hang, not a timing check */

static struct harness r_h;
static struct harness *volatile r_sig_h; /* for h_on_signals */
static const char *r_name = "regress";

static void r_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void r_die(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "%s: FAIL: ", r_name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s: the state directory is kept: %s\n", r_name, r_h.dir);
    h_fini(&r_h, true);
    exit(1);
}

/* The daemon up (4 fake GPUs, kill_after 1 s) in a state directory named
 * after tag; the curl handle to talk to it. */
static CURL *r_setup(const char *name, const char *exe, const char *tag)
{
    CURL *c;

    r_name = name;
    curl_global_init(CURL_GLOBAL_ALL);
    if (h_init(&r_h, exe, NULL, tag) != 0)
        exit(1);
    r_sig_h = &r_h;
    if (h_on_signals(&r_sig_h, true) != 0)
        r_die("cannot watch for signals");
    h_set(&r_h, "backend.gpus=4");
    h_set(&r_h, "backend.kill_after=1s");
    if (h_start(&r_h) != 0 || h_wait_up(&r_h, R_LIMIT_S) != 0)
        r_die("the daemon did not come up");
    if (!(c = h_curl(&r_h)))
        r_die("curl_easy_init failed");
    return c;
}

/* method path body -> status, parsed reply (caller frees) */
static json_t *r_call(CURL *c, const char *method, const char *path,
                      const char *body, long *status)
{
    char *reply;
    json_t *j;

    if (h_call(c, method, path, body, status, &reply) != CURLE_OK)
        r_die("%s %s: no answer", method, path);
    j = reply ? json_loads(reply, 0, NULL) : NULL;
    if (!j)
        r_die("%s %s: HTTP %ld, not JSON: %s", method, path, *status,
              reply ? reply : "");
    free(reply);
    return j;
}

/* r_call that must answer `want` */
static json_t *r_expect(CURL *c, const char *method, const char *path,
                        const char *body, long want)
{
    long status;
    json_t *j = r_call(c, method, path, body, &status);

    if (status != want) {
        char *s = json_dumps(j, JSON_COMPACT);

        r_die("%s %s: HTTP %ld (expected %ld): %s", method, path, status, want,
              s ? s : "");
    }
    return j;
}

/* A single submit that must answer `want`; the job's id. */
static int64_t r_submit(CURL *c, const char *body, long want)
{
    json_t *j = r_expect(c, "POST", "/v1/jobs", body, want);
    int64_t id = json_integer_value(json_object_get(j, "id"));

    if (id <= 0)
        r_die("submit %s: no job id", body);
    json_decref(j);
    return id;
}

static void r_wait_state(CURL *c, int64_t id, const char *want)
{
    double t0 = h_now_s();
    char path[64];

    snprintf(path, sizeof(path), "/v1/jobs/%" PRId64, id);
    for (;;) {
        json_t *j = r_expect(c, "GET", path, NULL, 200);
        const char *st = json_string_value(json_object_get(j, "state"));
        bool ok = st && strcmp(st, want) == 0;

        if (!ok && h_now_s() - t0 > R_LIMIT_S)
            r_die("job %" PRId64 " is %s after %.0f s, expected %s", id,
                  st ? st : "?", R_LIMIT_S, want);
        json_decref(j);
        if (ok)
            return;
        h_sleep_us(20000);
    }
}

#endif
