/* test_decode.c - the API's request bodies (src/daemon/decode.c): what is
 * accepted and filled in, and refusals that name the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/decode.h"

static json_t *submit_ok(const char *body)
{
    json_t *out = NULL;
    struct gp_diag d = {{0}, {0}};
    int rc = gp_api_decode_submit(body, strlen(body), &out, &d);

    if (rc != GP_OK)
        fail_msg("%s: %s: %s", body, d.where, d.msg);
    return out;
}

static void a_lone_job_gets_its_defaults(void **state)
{
    json_t *j = submit_ok("{\"command\": [\"/usr/bin/python3\", \"t.py\"]}");

    (void)state;
    assert_true(json_is_object(j));
    assert_int_equal(json_integer_value(json_object_get(j, "gpus")), 1);
    assert_string_equal(json_string_value(json_object_get(j, "tenant")),
                        "default");
    assert_string_equal(json_string_value(json_object_get(j, "name")),
                        "python3");
    json_decref(j);
    j = submit_ok("{\"command\": [\"x\"], \"gpu_milli\": 250, \"name\": \"n\", "
                  "\"tenant\": \"vision\"}");
    assert_int_equal(json_integer_value(json_object_get(j, "gpus")), 0);
    assert_string_equal(json_string_value(json_object_get(j, "name")), "n");
    assert_string_equal(json_string_value(json_object_get(j, "tenant")),
                        "vision");
    json_decref(j);
}

/* A default name is a name the API accepts: cut at 128 bytes on a
 * character's start, control characters shown as '?'. */
static void a_default_name_is_a_valid_name(void **state)
{
    char body[600];
    json_t *j, *again;
    const char *name;
    char *text;

    (void)state;
    strcpy(body, "{\"command\": [\"/p/");
    for (int i = 0; i < 100; i++)
        strcat(body, "\xc3\xa9"); /* e acute: 200 bytes */
    strcat(body, "\"]}");
    j = submit_ok(body);
    name = json_string_value(json_object_get(j, "name"));
    assert_int_equal(strlen(name), 128);
    assert_int_equal((unsigned char)name[126], 0xc3);
    text = json_dumps(j, 0);
    again = submit_ok(text);
    assert_true(json_equal(j, again));
    free(text);
    json_decref(again);
    json_decref(j);
    j = submit_ok("{\"command\": [\"/p/a\\u0007b\"]}");
    assert_string_equal(json_string_value(json_object_get(j, "name")), "a?b");
    json_decref(j);
}

static void a_batch_is_an_array(void **state)
{
    json_t *a = submit_ok("{\"jobs\": [{\"command\": [\"a\"]}, "
                          "{\"command\": [\"b\"], \"gpus\": 2}]}");

    (void)state;
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_array_get(a, 1), "gpus")), 2);
    json_decref(a);
}

static void
refused(int (*fn)(const char *, size_t, json_t **, struct gp_diag *),
        const char *body, int code, const char *where, const char *words)
{
    json_t *out = NULL;
    struct gp_diag d = {{0}, {0}};

    assert_int_equal(fn(body, strlen(body), &out, &d), code);
    if (strcmp(d.where, where) != 0 || !strstr(d.msg, words))
        fail_msg("%s: got %s: %s; expected %s: ...%s...", body, d.where, d.msg,
                 where, words);
    assert_null(out);
}

static void submit_mistakes_name_the_field(void **state)
{
    int (*f)(const char *, size_t, json_t **, struct gp_diag *) =
        gp_api_decode_submit;
    char big[1200 * 16 + 32];
    size_t o;

    (void)state;
    refused(f, "{\"command\": [\"a\"", GP_EPARSE, "body", "not JSON");
    refused(f, "[1]", GP_EPARSE, "body", "expected a JSON object");
    refused(f, "{}", GP_EPARSE, "command", "command: required");
    refused(f, "{\"command\": [\"a\"], \"gpuz\": 1}", GP_EPARSE, "gpuz",
            "unknown field");
    refused(f, "{\"command\": [\"a\"], \"gpus\": 65}", GP_ERANGE, "gpus",
            "from 0 to 64");
    refused(f, "{\"command\": [\"a\"], \"gpus\": \"2\"}", GP_EPARSE, "gpus",
            "expected an integer");
    refused(f, "{\"command\": [\"a\"], \"gpus\": 2, \"gpu_milli\": 5}",
            GP_EPARSE, "gpu_milli", "share of one GPU");
    refused(f, "{\"command\": [\"a\"], \"cwd\": \"x\"}", GP_EPARSE, "cwd",
            "absolute path");
    refused(f, "{\"command\": [\"\"]}", GP_EPARSE, "command", "command[0]");
    refused(f, "{\"command\": [\"a\", 3]}", GP_EPARSE, "command", "command[1]");
    refused(f, "{\"command\": [\"a\"], \"env\": {\"GPUPOOL_X\": \"1\"}}",
            GP_EPARSE, "env", "env.GPUPOOL_X");
    refused(f, "{\"command\": [\"a\"], \"tenant\": \"\"}", GP_EPARSE, "tenant",
            "tenant");
    refused(f, "{\"command\": [\"a\"], \"tenant\": \"a\\u0085b\"}", GP_EPARSE,
            "tenant", "printable UTF-8");
    refused(f, "{\"command\": [\"a\"], \"name\": \"a\\nb\"}", GP_EPARSE, "name",
            "printable");
    refused(f, "{\"command\": [\"a\"], \"time_limit_s\": -1}", GP_ERANGE,
            "time_limit_s", "number in [0");
    refused(f, "{\"command\": [\"a\"], \"checkpointable\": 1}", GP_EPARSE,
            "checkpointable", "true or false");
    refused(f, "{\"command\": [\"a\"], \"command\": [\"b\"]}", GP_EPARSE,
            "body", "duplicate");
    refused(f, "{\"jobs\": []}", GP_EPARSE, "jobs", "1 to 1000");
    refused(f, "{\"jobs\": [{\"command\": [\"a\"]}], \"x\": 1}", GP_EPARSE,
            "jobs", "1 to 1000");
    refused(f,
            "{\"jobs\": [{\"command\": [\"a\"]}, {\"command\": [\"b\"], "
            "\"gpus\": 99}]}",
            GP_ERANGE, "jobs[1].gpus", "jobs[1].gpus: expected");
    refused(f, "{\"jobs\": [{\"command\": [\"a\"]}, 7]}", GP_EPARSE, "jobs[1]",
            "expected an object");
    refused(f, "{\"jobs\": [{}]}", GP_EPARSE, "jobs[0].command", "required");
    /* 1,001 jobs */
    o = (size_t)sprintf(big, "{\"jobs\": [");
    for (int i = 0; i <= GP_API_MAX_BATCH; i++)
        o += (size_t)sprintf(big + o, "%s{\"command\":[\"a\"]}", i ? "," : "");
    sprintf(big + o, "]}");
    refused(f, big, GP_EPARSE, "jobs", "1 to 1000");
}

static json_t *tenant_ok(const char *body, bool create)
{
    json_t *out = NULL;
    struct gp_diag d = {{0}, {0}};

    if (gp_api_decode_tenant(body, strlen(body), create, &out, &d) != GP_OK)
        fail_msg("%s: %s: %s", body, d.where, d.msg);
    return out;
}

static int create(const char *b, size_t n, json_t **o, struct gp_diag *d)
{
    return gp_api_decode_tenant(b, n, true, o, d);
}

static int patch(const char *b, size_t n, json_t **o, struct gp_diag *d)
{
    return gp_api_decode_tenant(b, n, false, o, d);
}

static void tenant_bodies(void **state)
{
    json_t *t;

    (void)state;
    t = tenant_ok("{\"name\": \"v\", \"parent\": \"r\", \"weight\": 2.5, "
                  "\"guarantee\": 4, \"cap\": 8, \"lend_limit\": 1, "
                  "\"users\": [\"ann\", \"*\", \"uid:12\"]}",
                  true);
    assert_int_equal(json_object_size(t), 7);
    json_decref(t);
    t = tenant_ok("{\"users\": []}", false);
    json_decref(t);
    refused(create, "{\"weight\": 1}", GP_EPARSE, "name", "required");
    refused(create, "{\"name\": \"v\", \"weight\": 0}", GP_ERANGE, "weight",
            "(0, 1000000]");
    refused(create, "{\"name\": \"v\", \"guarantee\": -1}", GP_ERANGE,
            "guarantee", "0 to 10000000");
    refused(create, "{\"name\": \"v\", \"cap\": 1.5}", GP_EPARSE, "cap",
            "integer");
    refused(create, "{\"name\": \"v\", \"users\": \"ann\"}", GP_EPARSE, "users",
            "array");
    refused(create, "{\"name\": \"v\", \"users\": [\"a b\"]}", GP_EPARSE,
            "users[0]", "user name");
    refused(create, "{\"name\": \"v\", \"users\": [\"a\", \"b\", \"a\"]}",
            GP_EPARSE, "users[2]", "'a' is listed twice");
    refused(create, "{\"name\": \"v\", \"guarantee_by_type\": {}}", GP_EPARSE,
            "guarantee_by_type", "unknown field");
    refused(patch, "{}", GP_EPARSE, "body", "nothing to change");
    refused(patch, "{\"name\": \"w\"}", GP_EPARSE, "name", "cannot change");
    refused(patch, "{\"parent\": \"w\"}", GP_EPARSE, "parent", "cannot change");
    refused(patch, "{\"weigth\": 2}", GP_EPARSE, "weigth", "unknown field");
}

static void policy_options_are_text(void **state)
{
    json_t *o = NULL;
    struct gp_diag d = {{0}, {0}};
    const char *b = "{\"levels\": \"900,3600\", \"lifo\": 1, \"tolerance\": "
                    "0.5, \"swap\": true}";
    int (*f)(const char *, size_t, json_t **, struct gp_diag *) =
        gp_api_decode_policy_options;

    (void)state;
    assert_int_equal(gp_api_decode_policy_options(b, strlen(b), &o, &d), GP_OK);
    assert_string_equal(json_string_value(json_object_get(o, "levels")),
                        "900,3600");
    assert_string_equal(json_string_value(json_object_get(o, "lifo")), "1");
    assert_string_equal(json_string_value(json_object_get(o, "tolerance")),
                        "0.5");
    assert_string_equal(json_string_value(json_object_get(o, "swap")), "true");
    json_decref(o);
    refused(f, "{\"Bad\": \"1\"}", GP_EPARSE, "Bad", "option's name");
    refused(f, "{\"k\": null}", GP_EPARSE, "k", "expected a string");
    refused(f, "{\"k\": [1]}", GP_EPARSE, "k", "expected a string");
    refused(f, "{\"k\": \"\\u001b[2J\"}", GP_EPARSE, "k", "printable");
    refused(f, "[7]", GP_EPARSE, "body", "JSON object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_lone_job_gets_its_defaults),
        cmocka_unit_test(a_default_name_is_a_valid_name),
        cmocka_unit_test(a_batch_is_an_array),
        cmocka_unit_test(submit_mistakes_name_the_field),
        cmocka_unit_test(tenant_bodies),
        cmocka_unit_test(policy_options_are_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
