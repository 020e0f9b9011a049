/* test_tenants.c - the tenants file: what it accepts, and errors that name
 * the entry and the key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "trace/tenants.h"

/* {"tenants":[{"name":"t0"},{"name":"t1","parent":"t0"},...]}: n tenants,
 * each the child of the one before when `chain`, else all roots. */
static char *many_tenants(size_t n, bool chain, size_t *len)
{
    size_t cap = 64 + n * 48, o = 0;
    char *buf = malloc(cap);

    assert_non_null(buf);
    o += (size_t)snprintf(buf, cap, "{\"tenants\":[");
    for (size_t i = 0; i < n; i++) {
        if (chain && i > 0)
            o += (size_t)snprintf(buf + o, cap - o,
                                  "%s{\"name\":\"t%zu\",\"parent\":\"t%zu\"}",
                                  i ? "," : "", i, i - 1);
        else
            o += (size_t)snprintf(buf + o, cap - o, "%s{\"name\":\"t%zu\"}",
                                  i ? "," : "", i);
    }
    o += (size_t)snprintf(buf + o, cap - o, "]}");
    *len = o;
    return buf;
}

static int parse(const char *json, struct gp_tenant_list *l,
                 struct gp_diag *diag)
{
    gp_tenant_list_init(l);
    return gp_tenants_parse(l, json, strlen(json), "t.json", diag);
}

static void a_full_entry_is_read(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(
        parse("{\"tenants\":[{\"name\":\"r\",\"guarantee\":8},"
              "{\"name\":\"v\",\"parent\":\"r\",\"weight\":2.5,\"cap\":6,"
              "\"lend_limit\":1,\"guarantee\":5},"
              "{\"name\":\"w\",\"guarantee_by_type\":{\"V100\":3,"
              "\"K80\":2}}]}",
              &l, &d),
        GP_OK);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.t[1].name, "v");
    assert_string_equal(l.t[1].parent, "r");
    assert_true(l.t[1].weight == 2.5);
    assert_int_equal(l.t[1].guarantee, 5);
    assert_int_equal(l.t[1].cap, 6);
    assert_int_equal(l.t[1].lend_limit, 1);
    assert_int_equal(l.t[1].nby_type, 0);
    assert_int_equal(l.t[2].guarantee, 5); /* the sum by type */
    assert_int_equal(l.t[2].nby_type, 2);
    assert_string_equal(l.t[2].by_type[0].type, "V100");
    assert_int_equal(l.t[2].by_type[0].gpus, 3);
    assert_string_equal(l.t[2].by_type[1].type, "K80");
    assert_int_equal(l.t[2].by_type[1].gpus, 2);
    gp_tenant_list_fini(&l);
}

static void expect_error(const char *json, int code, const char *where,
                         const char *words)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    assert_int_equal(parse(json, &l, &d), code);
    assert_non_null(strstr(d.where, where));
    assert_non_null(strstr(d.msg, words));
    gp_tenant_list_fini(&l);
}

static void mistakes_name_the_entry_and_the_key(void **state)
{
    (void)state;
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarnatee\":1}]}", GP_EPARSE,
                 "tenants[0]", "guarnatee");
    expect_error("{\"tenants\":[{\"name\":\"a\"},{\"name\":\"b\",\"cap\":1,"
                 "\"guarantee\":2}]}",
                 GP_EINVAL, "tenants[1]", "below the guarantee");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee\":2,"
                 "\"lend_limit\":3}]}",
                 GP_EINVAL, "tenants[0]", "above the guarantee");
    expect_error("{\"tenants\":[{\"name\":\"a\"},{\"name\":\"a\"}]}", GP_EEXIST,
                 "tenants[1]", "twice");
    expect_error("{\"tenants\":[{\"name\":\"c\",\"parent\":\"p\"}]}", GP_ENOENT,
                 "tenants[0].parent", "'p'");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee\":-1}]}", GP_ERANGE,
                 "tenants[0]", "guarantee");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"weight\":0}]}", GP_ERANGE,
                 "tenants[0]", "weight");
    expect_error("{\"tenants\":[{\"guarantee\":1}]}", GP_EPARSE, "tenants[0]",
                 "name");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee\":3,"
                 "\"guarantee_by_type\":{\"V100\":2}}]}",
                 GP_EINVAL, "tenants[0]", "differs");
    expect_error("{\"tenants\":[{\"name\":\"r\",\"guarantee\":4},"
                 "{\"name\":\"c\",\"parent\":\"r\","
                 "\"guarantee_by_type\":{\"V100\":2}}]}",
                 GP_EINVAL, "tenants[1]", "without parent or children");
    expect_error("{\"tenants\":[{\"name\":\"r\",\"guarantee_by_type\":"
                 "{\"V100\":2}},{\"name\":\"c\",\"parent\":\"r\"}]}",
                 GP_EINVAL, "tenants[1]", "without parent or children");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee_by_type\":{}}]}",
                 GP_EPARSE, "tenants[0]", "guarantee_by_type");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee_by_type\":"
                 "{\"V100\":\"2\"}}]}",
                 GP_EPARSE, "tenants[0]", "guarantee_by_type.V100");
    expect_error("{\"tenant\":[]}", GP_EPARSE, "t.json", "tenant");
    expect_error("{\"tenants\":\n[{\"name\":\"a\",}]}", GP_EPARSE, "t.json:2",
                 "");
}

static void nesting_is_capped_at_32_levels_naming_the_entry(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};
    size_t len;
    char *doc = many_tenants(GP_TENANT_MAX_DEPTH, true, &len);

    (void)state;
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_parse(&l, doc, len, "t.json", &d), GP_OK);
    assert_int_equal(l.n, 32);
    gp_tenant_list_fini(&l);
    free(doc);

    doc = many_tenants(GP_TENANT_MAX_DEPTH + 1, true, &len);
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_parse(&l, doc, len, "t.json", &d), GP_ERANGE);
    assert_string_equal(d.where, "t.json: tenants[32].parent");
    assert_non_null(strstr(d.msg, "'t32' nests deeper than 32 levels"));
    gp_tenant_list_fini(&l);
    free(doc);
}

/* Regression: duplicate and parent checks compared every pair (100,000
 * tenants: 19 s); a 100,000-deep chain reached the core. */
static void
a_hundred_thousand_tenants_parse_and_a_deep_chain_is_refused(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};
    size_t len;
    char *doc = many_tenants(GP_TENANTS_MAX, false, &len);

    (void)state;
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_parse(&l, doc, len, "t.json", &d), GP_OK);
    assert_int_equal(l.n, GP_TENANTS_MAX);
    gp_tenant_list_fini(&l);
    free(doc);

    doc = many_tenants(GP_TENANTS_MAX, true, &len);
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_parse(&l, doc, len, "t.json", &d), GP_ERANGE);
    assert_string_equal(d.where, "t.json: tenants[32].parent");
    gp_tenant_list_fini(&l);
    free(doc);
    /* how long they take is bench/bench_parse's to say, not a test's */
}

static void names_are_capped_and_printable(void **state)
{
    char doc[512], name[GP_TENANT_NAME_MAX + 2];

    (void)state;
    memset(name, 'n', sizeof(name));
    name[GP_TENANT_NAME_MAX] = 0; /* at the cap: fine */
    snprintf(doc, sizeof(doc), "{\"tenants\":[{\"name\":\"%s\"}]}", name);
    {
        struct gp_tenant_list l;
        struct gp_diag d = {{0}, {0}};

        assert_int_equal(parse(doc, &l, &d), GP_OK);
        gp_tenant_list_fini(&l);
    }
    name[GP_TENANT_NAME_MAX] = 'n'; /* one byte over */
    name[GP_TENANT_NAME_MAX + 1] = 0;
    snprintf(doc, sizeof(doc), "{\"tenants\":[{\"name\":\"%s\"}]}", name);
    expect_error(doc, GP_ERANGE, "t.json: tenants[0]",
                 "name: longer than 128 bytes");
    /* an escape sequence that would drive the terminal */
    expect_error("{\"tenants\":[{\"name\":\"a\\u001b[2Jb\"}]}", GP_EPARSE,
                 "t.json: tenants[0]",
                 "name: control character 0x1b at byte 2");
    expect_error("{\"tenants\":[{\"name\":\"a\"},"
                 "{\"name\":\"b\",\"parent\":\"\\u009b\"}]}",
                 GP_EPARSE, "t.json: tenants[1]",
                 "parent: control character 0x9b");
    expect_error("{\"tenants\":[{\"name\":\"a\\u0000b\"}]}", GP_EPARSE,
                 "t.json:1", "is not allowed"); /* jansson refuses NUL */
    expect_error("{\"tenants\":[{\"name\":\"a\",\"guarantee_by_type\":"
                 "{\"V\\u0007\":1}}]}",
                 GP_EPARSE, "t.json: tenants[0]",
                 "guarantee_by_type: control character 0x07");
    {
        struct gp_tenant_list l;
        struct gp_diag d = {{0}, {0}};

        assert_int_equal(
            parse("{\"tenants\":[{\"name\":\"\xc3\xa9quipe\"}]}", &l, &d),
            GP_OK); /* UTF-8 is fine */
        gp_tenant_list_fini(&l);
    }
}

/* The documented cap is 64 MiB; the code allowed 128. */
static void a_file_over_64_mib_is_refused(void **state)
{
    char path[] = "/tmp/gp-tenants-XXXXXX";
    const char doc[] = "{\"tenants\":[{\"name\":\"a\"}]}";
    size_t pad = GP_TENANTS_FILE_MAX - (sizeof(doc) - 1);
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};
    char *buf = malloc(GP_TENANTS_FILE_MAX + 1);
    int fd = mkstemp(path);

    (void)state;
    assert_non_null(buf);
    assert_true(fd >= 0);
    memset(buf, ' ', pad); /* exactly at the cap: read */
    memcpy(buf + pad, doc, sizeof(doc) - 1);
    assert_int_equal(write(fd, buf, GP_TENANTS_FILE_MAX), GP_TENANTS_FILE_MAX);
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_load(&l, path, &d), GP_OK);
    gp_tenant_list_fini(&l);
    assert_int_equal(write(fd, "\n", 1), 1); /* one byte over */
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_load(&l, path, &d), GP_ERANGE);
    assert_non_null(strstr(d.msg, "larger than 64 MiB"));
    gp_tenant_list_fini(&l);
    close(fd);
    unlink(path);
    free(buf);
}

static void a_missing_file_is_an_io_error(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    gp_tenant_list_init(&l);
    assert_int_equal(gp_tenants_load(&l, "/nonexistent/t.json", &d), GP_EIO);
    assert_non_null(strstr(d.where, "/nonexistent/t.json"));
    gp_tenant_list_fini(&l);
}

static void the_bundled_files_load(void **state)
{
    static const char *const files[] = {
        "data/tenants/philly-vcs.json",
        "data/tenants/gavel-vcs.json",
        "data/tenants/itp-clusters.json",
    };
    static const uint32_t gpus[] = {512, 512, 1544};

    (void)state;
    for (size_t i = 0; i < 3; i++) {
        struct gp_tenant_list l;
        struct gp_diag d = {{0}, {0}};
        uint32_t sum = 0;

        gp_tenant_list_init(&l);
        assert_int_equal(gp_tenants_load(&l, files[i], &d), GP_OK);
        for (size_t k = 0; k < l.n; k++)
            sum += l.t[k].guarantee;
        assert_int_equal(sum, gpus[i]);
        gp_tenant_list_fini(&l);
    }
}

/* "users" (the daemon's members): names, "*", and no key at all. */
static void users_are_read_and_checked(void **state)
{
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(
        parse("{\"tenants\":[{\"name\":\"v\",\"users\":[\"ann\",\"bob.k\","
              "\"uid:1234\",\"svc$\"]},{\"name\":\"n\",\"users\":[\"*\"]},"
              "{\"name\":\"x\"},{\"name\":\"e\",\"users\":[]}]}",
              &l, &d),
        GP_OK);
    assert_int_equal(l.n, 4);
    assert_true(l.users[0].listed);
    assert_false(l.users[0].everyone);
    assert_int_equal(l.users[0].n, 4);
    assert_string_equal(l.users[0].names[0], "ann");
    assert_string_equal(l.users[0].names[1], "bob.k");
    assert_string_equal(l.users[0].names[2], "uid:1234");
    assert_string_equal(l.users[0].names[3], "svc$");
    assert_true(l.users[1].everyone);
    assert_int_equal(l.users[1].n, 0);
    assert_false(l.users[2].listed); /* no key: nobody but admins */
    assert_true(l.users[3].listed);
    assert_int_equal(l.users[3].n, 0);
    gp_tenant_list_fini(&l);

    expect_error("{\"tenants\":[{\"name\":\"a\",\"users\":\"ann\"}]}",
                 GP_EPARSE, "tenants[0]", "users: expected an array");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"users\":[\"ann\",7]}]}",
                 GP_EPARSE, "tenants[0]", "users[1]");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"users\":[\"an n\"]}]}",
                 GP_EPARSE, "tenants[0]", "users[0]: a user name is");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"users\":[\"-x\"]}]}",
                 GP_EPARSE, "tenants[0]", "start with '-'");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"users\":[\"\"]}]}", GP_EPARSE,
                 "tenants[0]", "users[0]: an empty name");
    expect_error("{\"tenants\":[{\"name\":\"a\",\"users\":[\"uid:1x\"]}]}",
                 GP_EPARSE, "tenants[0]", "digits only");
    expect_error("{\"tenants\":[{\"name\":\"a\"},{\"name\":\"b\","
                 "\"users\":[\"ann\",\"bob\",\"ann\"]}]}",
                 GP_EINVAL, "tenants[1]", "'ann' is listed twice");
    expect_error(
        "{\"tenants\":[{\"name\":\"a\",\"users\":[\"x234567890"
        "1234567890123456789012345678901234567890123456789012345\"]}]}",
        GP_EPARSE, "tenants[0]", "longer than 63");
}

/* The users of one tenant are capped; a list just under the cap with a
 * repeat at its end is found without comparing every pair. */
static void users_are_capped(void **state)
{
    size_t n = GP_TENANT_USERS_MAX, cap = 64 + (n + 1) * 16, o = 0;
    char *buf = malloc(cap);
    struct gp_tenant_list l;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_non_null(buf);
    o +=
        (size_t)snprintf(buf, cap, "{\"tenants\":[{\"name\":\"a\",\"users\":[");
    for (size_t i = 0; i <= n; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s\"u%zu\"", i ? "," : "", i);
    snprintf(buf + o, cap - o, "]}]}");
    assert_int_equal(parse(buf, &l, &d), GP_ERANGE);
    assert_non_null(strstr(d.msg, "users: more than 10000"));
    gp_tenant_list_fini(&l);
    o = (size_t)snprintf(buf, cap, "{\"tenants\":[{\"name\":\"a\",\"users\":[");
    for (size_t i = 0; i < n - 1; i++)
        o += (size_t)snprintf(buf + o, cap - o, "%s\"u%zu\"", i ? "," : "", i);
    snprintf(buf + o, cap - o, ",\"u7\"]}]}");
    assert_int_equal(parse(buf, &l, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "'u7' is listed twice"));
    gp_tenant_list_fini(&l);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_full_entry_is_read),
        cmocka_unit_test(mistakes_name_the_entry_and_the_key),
        cmocka_unit_test(nesting_is_capped_at_32_levels_naming_the_entry),
        cmocka_unit_test(
            a_hundred_thousand_tenants_parse_and_a_deep_chain_is_refused),
        cmocka_unit_test(names_are_capped_and_printable),
        cmocka_unit_test(a_file_over_64_mib_is_refused),
        cmocka_unit_test(a_missing_file_is_an_io_error),
        cmocka_unit_test(the_bundled_files_load),
        cmocka_unit_test(users_are_read_and_checked),
        cmocka_unit_test(users_are_capped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
