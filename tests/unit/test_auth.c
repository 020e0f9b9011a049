/* test_auth.c - who is asking (src/daemon/auth.c): the tokens file (hashes
 * only, errors naming file:line), finding a token by its hash, tenant
 * membership, and the HTTP front's refusal of plain HTTP off loopback. */
#define _GNU_SOURCE /* eventfd */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/auth.h"
#include "daemon/http.h"

#define HASH_A                                                                 \
    "sha256:"                                                                  \
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
#define HASH_B                                                                 \
    "sha256:"                                                                  \
    "0000000000000000000000000000000000000000000000000000000000000001"

static int parse(const char *text, struct gp_auth_token **t, size_t *n,
                 struct gp_diag *d)
{
    return gp_auth_tokens_parse(text, strlen(text), "tokens", t, n, d);
}

static void sha256_is_sha256(void **state)
{
    unsigned char d[GP_AUTH_DIGEST_BYTES];
    static const unsigned char abc[] = {
        0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40,
        0xde, 0x5d, 0xae, 0x22, 0x23, 0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17,
        0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad};

    (void)state;
    assert_int_equal(gp_auth_hash("abc", 3, d), GP_OK);
    assert_memory_equal(d, abc, sizeof(abc));
}

static void lines_are_read(void **state)
{
    struct gp_auth_token *t = NULL;
    size_t n = 0;
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(parse("# who may use TCP\n"
                           "\n" HASH_A " nobody vision nlp\r\n"
                           "   \t\n" HASH_B " root\n",
                           &t, &n, &d),
                     GP_OK);
    assert_int_equal(n, 2);
    assert_string_equal(t[0].user, "nobody");
    assert_int_equal(t[0].line, 3);
    assert_false(t[0].admin);
    assert_true(t[0].scoped);
    assert_int_equal(t[0].ntenants, 2);
    assert_string_equal(t[0].tenants, "vision");
    assert_string_equal(t[0].tenants + 7, "nlp");
    assert_int_equal(t[0].digest[0], 0xba);
    assert_int_equal(t[0].digest[31], 0xad);
    assert_string_equal(t[1].user, "root");
    assert_int_equal(t[1].uid, 0);
    assert_true(t[1].admin); /* root's token is an admin's */
    assert_false(t[1].scoped);
    free(t);
    /* an empty file: no tokens, TCP admits nobody */
    t = (void *)&d;
    assert_int_equal(parse("# none yet\n", &t, &n, &d), GP_OK);
    assert_null(t);
    assert_int_equal(n, 0);
}

static void refused(const char *text, int code, const char *where,
                    const char *words)
{
    struct gp_auth_token *t = NULL;
    size_t n = 7;
    struct gp_diag d = {{0}, {0}};

    assert_int_equal(parse(text, &t, &n, &d), code);
    assert_string_equal(d.where, where);
    if (!strstr(d.msg, words))
        fail_msg("'%s' not in '%s'", words, d.msg);
    assert_null(t);
    assert_int_equal(n, 7); /* nothing written on an error */
}

static void mistakes_name_the_line(void **state)
{
    char *big;
    size_t o = 0;

    (void)state;
    refused("# ok\nsecretsecretsecret root admin\n", GP_EPARSE, "tokens:2",
            "a plain token is refused");
    refused("sha256:abcd root\n", GP_EPARSE, "tokens:1", "4 hex digits");
    refused("sha256:"
            "zz7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad "
            "root\n",
            GP_EPARSE, "tokens:1", "'z' is not a hex digit");
    refused(HASH_A "\n", GP_EPARSE, "tokens:1", "no USER");
    refused(HASH_A " no-such-user-here\n", GP_EPARSE, "tokens:1",
            "'no-such-user-here' does not exist");
    refused(HASH_A " bad/user\n", GP_EPARSE, "tokens:1", "user 'bad/user'");
    refused(HASH_A " *\n", GP_EPARSE, "tokens:1", "one user's");
    refused(HASH_A " nobody vision admin\n", GP_EPARSE, "tokens:1",
            "do not mix");
    refused(HASH_A " nobody admin vision\n", GP_EPARSE, "tokens:1",
            "do not mix");
    refused(HASH_A " root vision\n", GP_EPARSE, "tokens:1", "root");
    refused(HASH_A " nobody vi\x1bsion\n", GP_EPARSE, "tokens:1",
            "not a tenant name");
    refused(HASH_A " nobody\n\n" HASH_A " root\n", GP_EEXIST, "tokens:3",
            "the same token as on line 1");
    {
        static const char nul[] = HASH_A " nobody\nxx\0yy\n";
        struct gp_auth_token *t = NULL;
        size_t n = 0;
        struct gp_diag d = {{0}, {0}};

        assert_int_equal(
            gp_auth_tokens_parse(nul, sizeof(nul) - 1, "tokens", &t, &n, &d),
            GP_EPARSE);
        assert_string_equal(d.where, "tokens:2");
        assert_non_null(strstr(d.msg, "NUL"));
    }
    /* one line too long, and one token too many */
    big = malloc(GP_AUTH_LINE_MAX + 64);
    assert_non_null(big);
    memset(big, ' ', GP_AUTH_LINE_MAX + 1);
    big[GP_AUTH_LINE_MAX + 1] = '\0';
    refused(big, GP_ERANGE, "tokens:1", "longer than 4096 bytes");
    free(big);
    big = malloc((GP_AUTH_MAX_TOKENS + 1) * 90 + 1);
    assert_non_null(big);
    for (int i = 0; i <= GP_AUTH_MAX_TOKENS; i++)
        o += (size_t)sprintf(big + o, "sha256:%064x nobody\n", i);
    refused(big, GP_ERANGE, "tokens:1025", "more than 1024 tokens");
    free(big);
}

static void a_token_is_found_by_its_hash_only(void **state)
{
    char tok[2 * GP_AUTH_TOKEN_BYTES + 1], other[sizeof(tok)], line[512];
    const char *tenants[] = {"vision"};
    struct gp_auth_token *t = NULL;
    const struct gp_auth_token *hit;
    struct gp_identity who;
    size_t n;

    (void)state;
    assert_int_equal(gp_auth_token_new(tok, NULL), GP_OK);
    assert_int_equal(gp_auth_token_new(other, NULL), GP_OK);
    assert_int_equal(strlen(tok), 64);
    assert_int_equal(strspn(tok, "0123456789abcdef"), 64);
    assert_string_not_equal(tok, other);
    assert_int_equal(gp_auth_token_line(tok, "nobody", tenants, 1, false, line,
                                        sizeof(line)),
                     GP_OK);
    assert_null(strstr(line, tok)); /* the file never holds the token */
    assert_int_equal(strncmp(line, "sha256:", 7), 0);
    assert_int_equal(
        gp_auth_tokens_parse(line, strlen(line), "t", &t, &n, NULL), GP_OK);
    assert_int_equal(n, 1);
    assert_non_null(hit = gp_auth_token_find(t, n, tok));
    gp_auth_identity_of(hit, &who);
    assert_true(who.known);
    assert_false(who.admin);
    assert_string_equal(who.user, "nobody");
    assert_string_equal(who.via, "token");
    assert_true(who.scoped);
    assert_string_equal(who.tenants, "vision");
    /* another token, a changed one, the hash itself, nothing, too long */
    assert_null(gp_auth_token_find(t, n, other));
    tok[10] ^= 1;
    assert_null(gp_auth_token_find(t, n, tok));
    assert_null(gp_auth_token_find(t, n, line + 7));
    assert_null(gp_auth_token_find(t, n, ""));
    assert_null(gp_auth_token_find(t, n, NULL));
    {
        char big[GP_AUTH_TOKEN_MAX + 2];

        memset(big, 'a', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        assert_null(gp_auth_token_find(t, n, big));
    }
    free(t);
    /* an admin token names no tenants */
    assert_int_equal(
        gp_auth_token_line(other, "root", tenants, 1, true, line, sizeof(line)),
        GP_EINVAL);
    assert_int_equal(gp_auth_token_line(other, "root", NULL, 0, true, line, 20),
                     GP_ERANGE);
}

static void the_file_is_read_and_guarded(void **state)
{
    char dir[] = "/tmp/gp-test-auth.XXXXXX", path[64];
    struct gp_auth_token *t = NULL;
    size_t n = 9;
    struct gp_diag d = {{0}, {0}};
    FILE *f;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/tokens", dir);
    /* missing: no tokens */
    assert_int_equal(gp_auth_tokens_load(path, &t, &n, &d), GP_OK);
    assert_null(t);
    assert_int_equal(n, 0);
    assert_non_null(f = fopen(path, "w"));
    fputs(HASH_A " root\n" HASH_B " nobody\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(gp_auth_tokens_load(path, &t, &n, &d), GP_OK);
    assert_int_equal(n, 2);
    free(t);
    /* whoever may write it may make themselves admin */
    assert_int_equal(chmod(path, 0620), 0);
    assert_int_equal(gp_auth_tokens_load(path, &t, &n, &d), GP_EINVAL);
    assert_string_equal(d.where, path);
    assert_non_null(strstr(d.msg, "others may write it (mode 0620)"));
    assert_int_equal(chmod(path, 0602), 0);
    assert_int_equal(gp_auth_tokens_load(path, &t, &n, &d), GP_EINVAL);
    /* errors name the file and the line */
    assert_non_null(f = fopen(path, "w"));
    fputs(HASH_A " root\nplain root\n", f);
    fclose(f);
    assert_int_equal(chmod(path, 0600), 0);
    assert_int_equal(gp_auth_tokens_load(path, &t, &n, &d), GP_EPARSE);
    {
        char want[80];

        snprintf(want, sizeof(want), "%s:2", path);
        assert_string_equal(d.where, want);
    }
    unlink(path);
    rmdir(dir);
}

static struct gp_identity person(const char *user, bool admin)
{
    struct gp_identity w;

    memset(&w, 0, sizeof(w));
    w.known = true;
    w.admin = admin;
    snprintf(w.user, sizeof(w.user), "%s", user);
    return w;
}

static void members_act_in_their_tenants_only(void **state)
{
    json_t *m = json_pack("{s[ss] s[s] s[] s[s]}", "vision", "ann", "uid:77",
                          "open", "*", "ops", "default", "bob");
    struct gp_identity ann = person("ann", false), bob = person("bob", false);
    struct gp_identity root = person("root", true), nobody = person("x", false);
    struct gp_identity anon;
    struct gp_identity scoped = person("ann", false);

    (void)state;
    memset(&anon, 0, sizeof(anon));
    assert_non_null(m);
    assert_true(gp_auth_may(m, false, &ann, "vision"));
    assert_false(gp_auth_may(m, false, &bob, "vision"));
    assert_true(gp_auth_may(m, false, &bob, "open"));
    assert_true(gp_auth_may(m, false, &nobody, "open"));
    assert_false(gp_auth_may(m, false, &ann, "ops")); /* no users: admins */
    assert_true(gp_auth_may(m, false, &root, "ops"));
    assert_true(gp_auth_may(m, false, &root, "undefined"));
    assert_false(gp_auth_may(m, false, &ann, "undefined"));
    assert_false(gp_auth_may(m, false, &anon, "open"));
    assert_false(gp_auth_may(m, false, &ann, NULL));
    /* "default" is open only when undefined and no tenants file */
    assert_true(gp_auth_may(m, true, &bob, "default"));
    assert_false(gp_auth_may(m, true, &ann, "default"));
    json_object_del(m, "default");
    assert_true(gp_auth_may(m, true, &ann, "default"));
    assert_false(gp_auth_may(m, false, &ann, "default"));
    assert_true(gp_auth_is_defined(m, true, "default"));
    assert_false(gp_auth_is_defined(m, false, "default"));
    assert_true(gp_auth_is_defined(m, false, "ops"));
    assert_false(gp_auth_is_defined(m, true, "nope"));
    /* a token kept to tenants acts in those, whatever the members say */
    scoped.scoped = true;
    scoped.ntenants = 2;
    memcpy(scoped.tenants, "ops\0nlp\0", 9);
    assert_true(gp_auth_may(m, false, &scoped, "ops"));
    assert_true(gp_auth_may(m, false, &scoped, "nlp"));
    assert_false(gp_auth_may(m, false, &scoped, "vision"));
    assert_false(gp_auth_may(m, false, &scoped, "op"));
    assert_false(gp_auth_may(m, true, &scoped, "default"));
    json_decref(m);
}

static int start(const char *listen, bool plain, struct gp_diag *d)
{
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    struct gp_http_options o = {
        .listen = listen,
        .allow_plain = plain,
        .max_body = 1024,
        .wake_fd = fd,
    };
    struct gp_http *h = NULL;
    int rc;

    assert_true(fd >= 0);
    rc = gp_http_start(&h, &o, d);
    gp_http_stop(h);
    close(fd);
    return rc;
}

static void plain_http_listens_on_loopback_only(void **state)
{
    struct gp_diag d = {{0}, {0}};

    (void)state;
    assert_int_equal(start("0.0.0.0:0", true, &d), GP_EINVAL);
    assert_string_equal(d.where, "0.0.0.0:0");
    assert_non_null(strstr(d.msg, "not loopback"));
    assert_int_equal(start(":0", true, &d), GP_EINVAL);
    assert_int_equal(start("[::]:0", true, &d), GP_EINVAL);
    assert_int_equal(start("127.0.0.1:0", true, &d), GP_OK);
    assert_int_equal(start("127.0.0.2:0", true, &d), GP_OK);
    /* ::1 where the machine has IPv6 */
    {
        int rc = start("[::1]:0", true, &d);

        assert_true(rc == GP_OK || (rc == GP_EIO && !strstr(d.msg, "loop")));
    }
    /* no TLS and no permission for plain: refused anywhere */
    assert_int_equal(start("127.0.0.1:0", false, &d), GP_EINVAL);
    assert_non_null(strstr(d.msg, "tls_cert"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sha256_is_sha256),
        cmocka_unit_test(lines_are_read),
        cmocka_unit_test(mistakes_name_the_line),
        cmocka_unit_test(a_token_is_found_by_its_hash_only),
        cmocka_unit_test(the_file_is_read_and_guarded),
        cmocka_unit_test(members_act_in_their_tenants_only),
        cmocka_unit_test(plain_http_listens_on_loopback_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
