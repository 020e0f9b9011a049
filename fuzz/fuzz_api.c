/* fuzz_api.c - the API's request decoder (src/daemon/decode.c) on any
 * bytes.
 *
 * The input is a request body for POST /v1/jobs, or, after a first line
 * "tenant+" (POST /v1/tenants), "tenant~" (PATCH /v1/tenants/NAME) or
 * "options" (PUT /v1/policy/options), a body for that. A refusal must name
 * a place and say why; what is accepted must be clean (the fields the
 * daemon relies on are there, of their types) and decode again to itself. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/decode.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum what { SUBMIT, CREATE, PATCH, OPTIONS };

static int decode(enum what w, const char *body, size_t len, json_t **out,
                  struct gp_diag *diag)
{
    switch (w) {
    case SUBMIT:
        return gp_api_decode_submit(body, len, out, diag);
    case CREATE:
        return gp_api_decode_tenant(body, len, true, out, diag);
    case PATCH:
        return gp_api_decode_tenant(body, len, false, out, diag);
    case OPTIONS:
        return gp_api_decode_policy_options(body, len, out, diag);
    }
    abort();
}

static void check_job(json_t *j)
{
    json_t *cmd = json_object_get(j, "command");
    json_t *gpus = json_object_get(j, "gpus");
    const char *tenant = json_string_value(json_object_get(j, "tenant"));
    const char *name = json_string_value(json_object_get(j, "name"));

    if (!json_is_object(j) || !json_is_array(cmd) || !json_array_size(cmd) ||
        !json_string_length(json_array_get(cmd, 0)))
        __builtin_trap();
    if (!tenant || !*tenant || !name || strlen(name) > 128)
        __builtin_trap();
    if (!json_is_integer(gpus) || json_integer_value(gpus) < 0 ||
        json_integer_value(gpus) > 64)
        __builtin_trap();
}

/* What was accepted, encoded and decoded again, is the same. */
static void again(enum what w, json_t *out)
{
    struct gp_diag diag = {{0}, {0}};
    json_t *wrapped = out, *back = NULL;
    char *text;

    if (w == SUBMIT && json_is_array(out))
        wrapped = json_pack("{sO}", "jobs", out);
    if (!wrapped || !(text = json_dumps(wrapped, JSON_COMPACT)))
        abort();
    if (decode(w, text, strlen(text), &back, &diag) != GP_OK)
        __builtin_trap();
    if (!json_equal(back, out))
        __builtin_trap();
    json_decref(back);
    free(text);
    if (wrapped != out)
        json_decref(wrapped);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        const char *line;
        enum what w;
    } heads[] = {
        {"tenant+\n", CREATE}, {"tenant~\n", PATCH}, {"options\n", OPTIONS}};
    const char *body = (const char *)data;
    struct gp_diag diag = {{0}, {0}};
    enum what w = SUBMIT;
    json_t *out = NULL;
    int rc;

    for (size_t i = 0; i < sizeof(heads) / sizeof(*heads); i++) {
        size_t n = strlen(heads[i].line);

        if (size >= n && memcmp(data, heads[i].line, n) == 0) {
            w = heads[i].w;
            body += n;
            size -= n;
            break;
        }
    }
    rc = decode(w, body, size, &out, &diag);
    if (rc != GP_OK) {
        if (out || !diag.where[0] || !diag.msg[0] ||
            (rc != GP_EPARSE && rc != GP_ERANGE && rc != GP_ENOMEM))
            __builtin_trap();
        return 0;
    }
    if (!out)
        __builtin_trap();
    if (w == SUBMIT) {
        if (json_is_array(out)) {
            if (!json_array_size(out) ||
                json_array_size(out) > GP_API_MAX_BATCH)
                __builtin_trap();
            for (size_t i = 0; i < json_array_size(out); i++)
                check_job(json_array_get(out, i));
        } else {
            check_job(out);
        }
    } else if (!json_is_object(out) ||
               (w == CREATE &&
                !json_string_value(json_object_get(out, "name")))) {
        __builtin_trap();
    }
    again(w, out);
    json_decref(out);
    return 0;
}
