/* cmd_token.c - `gpupool token new`: an API token for the daemon's TCP
 * listener, and the line of the tokens file that admits it (its hash: the
 * file never holds a token; src/daemon/auth.h). */
#include <getopt.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "daemon/auth.h"
#include "trace/csv.h"     /* gp_text_check */
#include "trace/tenants.h" /* gp_tenant_user_check, GP_TENANT_NAME_MAX */

#define MAX_TENANTS 64

static const char token_help[] =
    "usage: gpupool token new USER [--tenant T]... [--admin] [--json]\n"
    "\n"
    "Make an API token for USER: 32 random bytes from /dev/urandom, in hex.\n"
    "It is printed once, with the line to append to the daemon's tokens\n"
    "file (server.tokens_file, by default <state_dir>/tokens), which holds\n"
    "only its SHA-256 hash. The daemon reads the file when it starts and on\n"
    "SIGHUP. A client presents the token as GPUPOOL_TOKEN (with GPUPOOL_URL)\n"
    "or as 'Authorization: Bearer TOKEN'.\n"
    "\n"
    "  -t, --tenant T  the token acts in tenant T only (repeat for more);\n"
    "                  without, in the tenants whose users list USER\n"
    "      --admin     an admin's token: every tenant's jobs, and creating\n"
    "                  and changing tenants and the policy's options\n"
    "      --json      print {\"token\": ..., \"line\": ...}\n";

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "gpupool token: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "; see `gpupool token --help`\n");
    return 2;
}

static int token_new(int argc, char **argv)
{
    static const struct option opts[] = {
        {"tenant", required_argument, NULL, 't'},
        {"admin", no_argument, NULL, 'a'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *tenants[MAX_TENANTS], *user, *why;
    char token[2 * GP_AUTH_TOKEN_BYTES + 1], line[GP_AUTH_LINE_MAX + 1];
    char whyb[64];
    size_t nt = 0;
    bool admin = false, json = false;
    struct gp_diag diag = {{0}, {0}};
    int c;

    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":t:h", opts, NULL)) != -1) {
        switch (c) {
        case 't':
            if (nt == MAX_TENANTS)
                return usage("at most %s --tenant", "64");
            if (strlen(optarg) > GP_TENANT_NAME_MAX ||
                gp_text_check(optarg, strlen(optarg), whyb, sizeof(whyb)) ||
                strpbrk(optarg, " \t") || strcmp(optarg, "admin") == 0 ||
                !*optarg)
                return usage("--tenant '%s': a tenant name here is 1 to 128 "
                             "bytes of printable UTF-8 without blanks, not "
                             "'admin'",
                             optarg);
            tenants[nt++] = optarg;
            break;
        case 'a':
            admin = true;
            break;
        case 'j':
            json = true;
            break;
        case 'h':
            fputs(token_help, stdout);
            return 0;
        case ':':
            return usage("%s needs a value", argv[optind - 1]);
        default:
            return usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return usage("%s",
                     optind == argc ? "which USER?" : "one USER, then options");
    user = argv[optind];
    if (strcmp(user, "*") == 0 ||
        (why = gp_tenant_user_check(user, strlen(user))))
        return usage("USER '%s' is not a user name", user);
    if (admin && nt)
        return usage("%s", "--admin acts in every tenant: no --tenant with it");
    if (!getpwnam(user))
        fprintf(stderr,
                "gpupool token: warning: no user '%s' on this machine; the "
                "daemon refuses the line where there is none\n",
                user);
    if (gp_auth_token_new(token, &diag) != GP_OK) {
        fprintf(stderr, "gpupool token: %s: %s\n", diag.where, diag.msg);
        return 1;
    }
    if (gp_auth_token_line(token, user, tenants, nt, admin, line,
                           sizeof(line)) != GP_OK) {
        fprintf(stderr, "gpupool token: the line would be over %d bytes\n",
                GP_AUTH_LINE_MAX);
        return 1;
    }
    if (json) {
        json_t *o = json_pack("{ssss}", "token", token, "line", line);
        char *text = o ? json_dumps(o, JSON_PRESERVE_ORDER) : NULL;

        json_decref(o);
        if (!text) {
            fprintf(stderr, "gpupool token: out of memory\n");
            return 1;
        }
        puts(text);
        free(text);
    } else
        printf("token (shown once; give it to %s, e.g. as GPUPOOL_TOKEN):\n"
               "  %s\n"
               "line for the tokens file (server.tokens_file), then SIGHUP "
               "the daemon:\n"
               "  %s\n",
               user, token, line);
    memset(token, 0, sizeof(token));
    return 0;
}

int gp_cmd_token(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        fputs(token_help, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "new") == 0)
        return token_new(argc - 1, argv + 1);
    return usage("unknown subcommand '%s' (only: new)", argv[1]);
}
