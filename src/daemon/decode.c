/* decode.c - the API's request bodies (decode.h).
 *
 * Key decision: one table of fields per request says each field's type and
 * bounds; anything else is refused, naming the field, before the daemon
 * changes anything. Clean output is what the store keeps, so it must read
 * back as itself (fuzz/fuzz_api.c checks it).
 */
#include "daemon/decode.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/cluster.h" /* GP_MAX_NODE_GPUS */
#include "trace/csv.h"       /* gp_text_check */
#include "trace/tenants.h"   /* names and users of tenants */

#define NAME_MAX_BYTES 128 /* a job's name */

enum kind { K_STRING, K_NAME, K_INTEGER, K_NUMBER, K_BOOL, K_ARGS, K_ENV };

struct field {
    const char *name;
    enum kind kind;
    double lo, hi;
};

static const struct field job_fields[] = {
    {"command", K_ARGS, 1, GP_API_MAX_ARGS},
    {"name", K_STRING, 0, NAME_MAX_BYTES},
    {"tenant", K_NAME, 1, GP_TENANT_NAME_MAX},
    {"cwd", K_STRING, 1, 4095},
    {"env", K_ENV, 0, GP_API_MAX_ENV},
    {"gpus", K_INTEGER, 0, GP_MAX_NODE_GPUS},
    {"gpu_milli", K_INTEGER, 0, 999},
    {"min_gpus", K_INTEGER, 0, GP_MAX_NODE_GPUS},
    {"max_gpus", K_INTEGER, 0, GP_MAX_NODE_GPUS},
    {"gpu_type", K_STRING, 0, 64},
    {"cpus", K_INTEGER, 0, 1 << 20},
    {"mem_mib", K_INTEGER, 0, 1ll << 40},
    {"priority", K_INTEGER, -1000000, 1000000},
    {"checkpointable", K_BOOL, 0, 0},
    {"time_limit_s", K_NUMBER, 0, 366.0 * 86400},
    {"slo_s", K_NUMBER, 0, 3660.0 * 86400},
    {"client_id", K_STRING, 1, 128},
};

static const char job_known[] =
    "known: command, name, tenant, cwd, env, gpus, gpu_milli, min_gpus, "
    "max_gpus, gpu_type, cpus, mem_mib, priority, checkpointable, "
    "time_limit_s, slo_s, client_id";

static const struct field tenant_fields[] = {
    {"name", K_NAME, 1, GP_TENANT_NAME_MAX},
    {"parent", K_NAME, 1, GP_TENANT_NAME_MAX},
    {"weight", K_NUMBER, 0, 1e6},
    {"guarantee", K_INTEGER, 0, GP_API_MAX_GUARANTEE},
    {"cap", K_INTEGER, 0, GP_API_MAX_GUARANTEE},
    {"lend_limit", K_INTEGER, 0, GP_API_MAX_GUARANTEE},
    {"users", K_ARGS, 0, GP_TENANT_USERS_MAX}, /* checked as users below */
};

static int fail(struct gp_diag *diag, int code, const char *where,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct gp_diag *diag, int code, const char *where,
                const char *fmt, ...)
{
    va_list ap;

    if (diag) {
        snprintf(diag->where, sizeof(diag->where), "%s", where);
        va_start(ap, fmt);
        vsnprintf(diag->msg, sizeof(diag->msg), fmt, ap);
        va_end(ap);
    }
    return code;
}

static json_t *load(const char *body, size_t len, struct gp_diag *diag, int *rc)
{
    json_error_t je;
    json_t *req = json_loadb(body, len, JSON_REJECT_DUPLICATES, &je);

    if (!req)
        *rc = fail(diag, GP_EPARSE, "body",
                   "body: not JSON (line %d, column %d: %s)", je.line,
                   je.column, je.text);
    else if (!json_is_object(req)) {
        json_decref(req);
        req = NULL;
        *rc = fail(diag, GP_EPARSE, "body", "body: expected a JSON object");
    }
    return req;
}

/* Tabs are allowed; other control characters are not. */
static bool bad_text(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 && *s != '\t')
            return true;
    return false;
}

/* One field's value against its row of the table. */
static int check_value(const struct field *fd, json_t *v, const char *f,
                       struct gp_diag *diag)
{
    char why[64];

    switch (fd->kind) {
    case K_STRING:
        if (!json_is_string(v) || json_string_length(v) < (size_t)fd->lo ||
            json_string_length(v) > (size_t)fd->hi ||
            bad_text(json_string_value(v)))
            return fail(diag, GP_EPARSE, f,
                        "%s: expected a string of %.0f to %.0f printable "
                        "characters",
                        f, fd->lo, fd->hi);
        return GP_OK;
    case K_NAME:
        if (!json_is_string(v) || json_string_length(v) < 1 ||
            json_string_length(v) > (size_t)fd->hi ||
            gp_text_check(json_string_value(v), json_string_length(v), why,
                          sizeof(why)))
            return fail(diag, GP_EPARSE, f,
                        "%s: expected a name of 1 to %.0f bytes of "
                        "printable UTF-8",
                        f, fd->hi);
        return GP_OK;
    case K_INTEGER:
        if (!json_is_integer(v))
            return fail(diag, GP_EPARSE, f,
                        "%s: expected an integer from %.0f to %.0f", f, fd->lo,
                        fd->hi);
        if (json_integer_value(v) < fd->lo || json_integer_value(v) > fd->hi)
            return fail(diag, GP_ERANGE, f,
                        "%s: expected an integer from %.0f to %.0f", f, fd->lo,
                        fd->hi);
        return GP_OK;
    case K_NUMBER:
        if (!json_is_number(v))
            return fail(diag, GP_EPARSE, f, "%s: expected a number", f);
        /* weight: (0, hi]; time_limit_s: [0, hi] */
        if (!(json_number_value(v) >= fd->lo) ||
            json_number_value(v) > fd->hi ||
            (strcmp(fd->name, "weight") == 0 && json_number_value(v) <= 0))
            return fail(diag, GP_ERANGE, f,
                        "%s: expected a number %s%.0f, %.0f]", f,
                        strcmp(fd->name, "weight") == 0 ? "in (" : "in [",
                        fd->lo, fd->hi);
        return GP_OK;
    case K_BOOL:
        if (!json_is_boolean(v))
            return fail(diag, GP_EPARSE, f, "%s: expected true or false", f);
        return GP_OK;
    case K_ARGS:
        if (!json_is_array(v) || json_array_size(v) < (size_t)fd->lo ||
            json_array_size(v) > (size_t)fd->hi)
            return fail(diag, GP_EPARSE, f,
                        "%s: expected an array of %.0f to %.0f strings", f,
                        fd->lo, fd->hi);
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *a = json_array_get(v, i);

            if (!json_is_string(a) || json_string_length(a) > 65536 ||
                strlen(json_string_value(a)) != json_string_length(a) ||
                (i == 0 && json_string_length(a) == 0))
                return fail(diag, GP_EPARSE, f,
                            "%s[%zu]: expected a string without NUL (the "
                            "first not empty)",
                            f, i);
        }
        return GP_OK;
    case K_ENV: {
        const char *ek;
        json_t *ev;

        if (!json_is_object(v) || json_object_size(v) > (size_t)fd->hi)
            return fail(diag, GP_EPARSE, f,
                        "%s: expected an object of at most %.0f strings", f,
                        fd->hi);
        json_object_foreach(v, ek, ev)
        {
            if (!json_is_string(ev) || !*ek || strchr(ek, '=') ||
                strlen(ek) + json_string_length(ev) > 500 ||
                strlen(json_string_value(ev)) != json_string_length(ev) ||
                strncmp(ek, "GPUPOOL_", 8) == 0 ||
                strcmp(ek, "CUDA_VISIBLE_DEVICES") == 0)
                return fail(diag, GP_EPARSE, f,
                            "%s.%.64s: a variable is NAME (no '=', not "
                            "GPUPOOL_* or CUDA_VISIBLE_DEVICES) with a "
                            "string value, 500 bytes in all",
                            f, ek);
        }
        return GP_OK;
    }
    }
    return fail(diag, GP_EPARSE, f, "%s: unexpected", f);
}

/* Every key of obj must be in the table and its value fit its row. */
static int check_fields(json_t *obj, const struct field *table, size_t n,
                        const char *where, const char *known,
                        struct gp_diag *diag)
{
    const char *key;
    json_t *v;
    char f[200];
    int rc;

    json_object_foreach(obj, key, v)
    {
        const struct field *fd = NULL;

        for (size_t i = 0; i < n; i++)
            if (strcmp(table[i].name, key) == 0)
                fd = &table[i];
        /* a field named "" is named so */
        snprintf(f, sizeof(f), "%s%s%.64s", where, *where ? "." : "",
                 *key ? key : "\"\"");
        if (!fd)
            return fail(diag, GP_EPARSE, f, "%s: unknown field (%s)", f, known);
        if ((rc = check_value(fd, v, f, diag)) != GP_OK)
            return rc;
    }
    return GP_OK;
}

/* ---- submit ---------------------------------------------------------------
 */

/* The program's base name, as a job's name: at most NAME_MAX_BYTES bytes
 * (cut at a character's start), control characters as '?'. */
static json_t *default_name(const char *prog)
{
    const char *base = strrchr(prog, '/');
    char buf[NAME_MAX_BYTES + 1];
    size_t n;

    base = base ? base + 1 : prog;
    n = strlen(base);
    if (n > NAME_MAX_BYTES) {
        n = NAME_MAX_BYTES;
        while (n > 0 && ((unsigned char)base[n] & 0xC0) == 0x80)
            n--;
    }
    memcpy(buf, base, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] < 0x20 && buf[i] != '\t')
            buf[i] = '?';
    return json_string(buf);
}

/* One job; prefix is "" for a lone job, "jobs[3]" in a batch. */
static int check_job(json_t *req, const char *prefix, json_t **clean,
                     struct gp_diag *diag)
{
    const char *dot = *prefix ? "." : "";
    char f[64];
    json_t *v, *c;
    int rc;

    if (!json_is_object(req))
        return fail(diag, GP_EPARSE, *prefix ? prefix : "body",
                    "%s: expected an object", *prefix ? prefix : "body");
    if ((rc = check_fields(req, job_fields,
                           sizeof(job_fields) / sizeof(*job_fields), prefix,
                           job_known, diag)) != GP_OK)
        return rc;
    if (!json_object_get(req, "command")) {
        snprintf(f, sizeof(f), "%s%scommand", prefix, dot);
        return fail(diag, GP_EPARSE, f,
                    "%s: required (an array: program and arguments)", f);
    }
    v = json_object_get(req, "cwd");
    if (v && json_string_value(v)[0] != '/') {
        snprintf(f, sizeof(f), "%s%scwd", prefix, dot);
        return fail(diag, GP_EPARSE, f, "%s: expected an absolute path", f);
    }
    if (json_integer_value(json_object_get(req, "gpu_milli")) > 0 &&
        json_integer_value(json_object_get(req, "gpus")) > 0) {
        snprintf(f, sizeof(f), "%s%sgpu_milli", prefix, dot);
        return fail(diag, GP_EPARSE, f,
                    "%s is a share of one GPU: it asks gpus 0", f);
    }
    if (!(c = json_deep_copy(req)))
        return fail(diag, GP_ENOMEM, *prefix ? prefix : "body",
                    "out of memory");
    if (!json_object_get(c, "gpus"))
        json_object_set_new(
            c, "gpus",
            json_integer(
                json_integer_value(json_object_get(c, "gpu_milli")) ? 0 : 1));
    if (!json_object_get(c, "tenant"))
        json_object_set_new(c, "tenant", json_string("default"));
    if (!json_object_get(c, "name"))
        json_object_set_new(c, "name",
                            default_name(json_string_value(json_array_get(
                                json_object_get(c, "command"), 0))));
    if (!json_object_get(c, "gpus") || !json_object_get(c, "tenant") ||
        !json_object_get(c, "name")) {
        json_decref(c);
        return fail(diag, GP_ENOMEM, *prefix ? prefix : "body",
                    "out of memory");
    }
    *clean = c;
    return GP_OK;
}

int gp_api_decode_submit(const char *body, size_t len, json_t **jobs_out,
                         struct gp_diag *diag)
{
    json_t *req, *jobs, *out = NULL, *one;
    int rc = GP_OK;

    if (!(req = load(body, len, diag, &rc)))
        return rc;
    if (!(jobs = json_object_get(req, "jobs"))) {
        rc = check_job(req, "", &out, diag);
        json_decref(req);
        if (rc == GP_OK)
            *jobs_out = out;
        return rc;
    }
    /* a batch: all or nothing */
    if (json_object_size(req) != 1 || !json_is_array(jobs) ||
        json_array_size(jobs) == 0 ||
        json_array_size(jobs) > GP_API_MAX_BATCH) {
        json_decref(req);
        return fail(diag, GP_EPARSE, "jobs",
                    "jobs: expected {\"jobs\": [1 to %d job objects]}",
                    GP_API_MAX_BATCH);
    }
    if (!(out = json_array())) {
        json_decref(req);
        return fail(diag, GP_ENOMEM, "body", "out of memory");
    }
    for (size_t i = 0; i < json_array_size(jobs); i++) {
        char where[32];

        snprintf(where, sizeof(where), "jobs[%zu]", i);
        if ((rc = check_job(json_array_get(jobs, i), where, &one, diag)) !=
            GP_OK)
            break;
        if (json_array_append_new(out, one) != 0) {
            rc = fail(diag, GP_ENOMEM, where, "out of memory");
            break;
        }
    }
    json_decref(req);
    if (rc != GP_OK) {
        json_decref(out);
        return rc;
    }
    *jobs_out = out;
    return GP_OK;
}

/* ---- tenants --------------------------------------------------------------
 */

int gp_api_decode_tenant(const char *body, size_t len, bool create,
                         json_t **out, struct gp_diag *diag)
{
    const char *known = create ? "known: name, parent, weight, guarantee, "
                                 "cap, lend_limit, users"
                               : "known: weight, guarantee, cap, "
                                 "lend_limit, users";
    json_t *req, *users;
    int rc = GP_OK;

    if (!(req = load(body, len, diag, &rc)))
        return rc;
    if (!create &&
        (json_object_get(req, "name") || json_object_get(req, "parent"))) {
        const char *f = json_object_get(req, "name") ? "name" : "parent";

        rc = fail(diag, GP_EPARSE, f,
                  "%s: a tenant's %s cannot change (its name is in the "
                  "path; create another tenant instead)",
                  f, f);
        goto fail;
    }
    if ((rc = check_fields(req, tenant_fields,
                           sizeof(tenant_fields) / sizeof(*tenant_fields), "",
                           known, diag)) != GP_OK)
        goto fail;
    if (create && !json_object_get(req, "name")) {
        rc = fail(diag, GP_EPARSE, "name", "name: required");
        goto fail;
    }
    if (!create && json_object_size(req) == 0) {
        rc = fail(diag, GP_EPARSE, "body", "body: nothing to change (%s)",
                  known);
        goto fail;
    }
    if ((users = json_object_get(req, "users"))) {
        size_t i;
        json_t *u;

        json_array_foreach(users, i, u)
        {
            char f[32];
            const char *why = gp_tenant_user_check(json_string_value(u),
                                                   json_string_length(u));

            snprintf(f, sizeof(f), "users[%zu]", i);
            if (why) {
                rc = fail(diag, GP_EPARSE, f, "%s: %s", f, why);
                goto fail;
            }
            for (size_t k = 0; k < i; k++)
                if (json_equal(json_array_get(users, k), u)) {
                    rc = fail(diag, GP_EPARSE, f, "%s: '%s' is listed twice", f,
                              json_string_value(u));
                    goto fail;
                }
        }
    }
    *out = req;
    return GP_OK;
fail:
    json_decref(req);
    return rc;
}

/* ---- policy options -------------------------------------------------------
 */

int gp_api_decode_policy_options(const char *body, size_t len, json_t **out,
                                 struct gp_diag *diag)
{
    json_t *req, *clean = NULL, *v;
    const char *key;
    int rc = GP_OK;

    if (!(req = load(body, len, diag, &rc)))
        return rc;
    if (json_object_size(req) > GP_API_MAX_OPTIONS) {
        rc = fail(diag, GP_ERANGE, "body", "body: at most %d options",
                  GP_API_MAX_OPTIONS);
        goto fail;
    }
    if (!(clean = json_object())) {
        rc = fail(diag, GP_ENOMEM, "body", "out of memory");
        goto fail;
    }
    json_object_foreach(req, key, v)
    {
        char f[80], text[64], why[64];
        const char *s = NULL;
        size_t n = strlen(key);

        snprintf(f, sizeof(f), "%.64s", *key ? key : "\"\"");
        if (n == 0 || n > 64 ||
            n != strspn(key, "abcdefghijklmnopqrstuvwxyz"
                             "0123456789_.-")) {
            rc = fail(diag, GP_EPARSE, f,
                      "%s: an option's name is 1 to 64 of a-z, 0-9, '_', "
                      "'.', '-'",
                      f);
            goto fail;
        }
        if (json_is_string(v)) {
            s = json_string_value(v);
            if (json_string_length(v) > 1024 ||
                strlen(s) != json_string_length(v) ||
                gp_text_check(s, strlen(s), why, sizeof(why))) {
                rc = fail(diag, GP_EPARSE, f,
                          "%s: expected a value of at most 1024 printable "
                          "bytes",
                          f);
                goto fail;
            }
        } else if (json_is_integer(v)) {
            snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
                     json_integer_value(v));
            s = text;
        } else if (json_is_real(v)) {
            snprintf(text, sizeof(text), "%.17g", json_real_value(v));
            s = text;
        } else if (json_is_boolean(v)) {
            s = json_is_true(v) ? "true" : "false";
        } else {
            rc = fail(diag, GP_EPARSE, f,
                      "%s: expected a string (or a number, true, false)", f);
            goto fail;
        }
        if (json_object_set_new(clean, key, json_string(s)) != 0) {
            rc = fail(diag, GP_ENOMEM, f, "out of memory");
            goto fail;
        }
    }
    json_decref(req);
    *out = clean;
    return GP_OK;
fail:
    json_decref(clean);
    json_decref(req);
    return rc;
}
