/* cmd_sim.c - `gpupool sim` and `gpupool demo`: read a trace once, replay
 * it under each requested policy on a fresh copy of the cluster, print a
 * table or JSON, and optionally write an HTML report and per-job CSVs.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "gpupool/goodput.h"
#include "gpupool/policies.h"
#include "gpupool/report.h"
#include "gpupool/sim.h"
#include "trace/tenants.h"

extern const unsigned char gp_demo_trace[];
extern const size_t gp_demo_trace_len;
extern const unsigned char gp_demo_tenants[];
extern const size_t gp_demo_tenants_len;

#define MAX_POLICIES 16
#define MAX_OPTS 32

struct sim_args {
    const char *trace;
    const char *format;
    const char *trace_aux;
    const char *cluster;
    const char *placement;
    const char *placer; /* NULL = bestfit */
    char *policies;
    struct gp_kv opts[MAX_OPTS];
    char *opt_policy[MAX_OPTS]; /* NULL = every policy */
    /* each option's text, split in place (argv stays whole for the
     * command line printed with the results) */
    char opt_text[MAX_OPTS][512];
    size_t nopts;
    double restart_cost_s;
    double round_s;
    uint64_t seed;
    bool json, skip_bad, progress, with_wall, quiet, demo;
    const char *report;
    const char *jobs_csv;
    const char *runs_csv;
    const char *fairshare_csv; /* tenants' share intervals */
    const char *summary_csv;   /* one row per run */
    bool explain;              /* --explain-compliance */
    int verbose;
    const char *tenants;
    double grace_s; /* < 0: the policy's default */
    enum gp_preemption_model preemption;
    bool shares_round_up;
    double ckpt_cost_s;
    double delay_s;
    const char *node_events;
    double mtbf_h, mttr_h;
    bool gavel_speeds;
    bool gavel_spread;   /* with Gavel's figures for spread gangs */
    double spread_speed; /* 0 = not given */
    double half_life_s;
    double min_run_s[GP_NPRIO];
    uint32_t max_preemptions[GP_NPRIO];
    enum gp_ckpt_mode ckpt;
    enum gp_elastic_mode elastic;
    double elastic_min;      /* 0 = 0.5 */
    double resize_cost_s;    /* < 0: the restart cost */
    bool resize_transparent; /* --resize-model transparent */
    const char *goodput;     /* --goodput: Pollux's model profiles */
    bool elastic_given;      /* --elastic was given */
    double slice_overhead;   /* --slice-overhead */
    const char *sweep;       /* offered loads, "0.6,0.8,1.0,1.2" */
    const char *parity;      /* a peer simulator's world; NULL = gpupool's */
    const char *parity_line; /* what the output says of it (set_parity) */
    /* given on the command line (--parity checks them) */
    bool restart_given, round_given, preemption_given, speed_given;
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void log_stderr(void *priv, enum gp_log_level level, const char *msg)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};

    (void)priv;
    fprintf(stderr, "gpupool: %s: %s\n", names[level], msg);
}

static void sim_usage(FILE *out, bool demo)
{
    if (demo)
        fprintf(out,
                "usage: gpupool demo [--policy LIST] [--placement MODEL] "
                "[--cluster SPEC]\n"
                "                    [--report DIR] [--json] [--no-progress]"
                "\n\n"
                "Replays the bundled Microsoft Philly trace (82,247 jobs) on a "
                "512-GPU cluster\n(64 nodes x 8 GPUs) whose 15 virtual "
                "clusters are tenants with guarantees\n(data/tenants/"
                "philly-vcs.json), under fifo, fifo-backfill, sjf, las,\n"
                "static-quota and pool; prints them side by side and writes "
                "an HTML report\nto ./gpupool-report/. Every job can "
                "checkpoint.\n");
    else
        fprintf(
            out,
            "usage: gpupool sim --trace FILE [options]\n\n"
            "  -t, --trace FILE        the trace (.csv, .json, .trace; "
            "plain, .gz, .xz, .tar.gz)\n"
            "      --format NAME       its format (default: detected; "
            "see 'gpupool formats')\n"
            "      --trace-aux FILE    a second table (PAI task table)\n"
            "  -c, --cluster SPEC      NxG, NxG:TYPE, a preset, a JSON or "
            "node-list file\n"
            "                          (default: the trace's preset; see "
            "docs/cluster.md)\n"
            "      --placement MODEL   count | pack | topo | consolidate "
            "(default pack)\n"
            "  -p, --policy LIST       comma-separated policies (default "
            "fifo)\n"
            "      --opt [POLICY.]KEY=VALUE   a policy option "
            "(repeatable)\n"
            "      --restart-cost S    seconds a job pays to resume after "
            "preemption (default 30)\n"
            "      --round S           also run a round every S seconds "
            "(default 0: on events)\n"
            "      --seed N            random seed (default 1)\n"
            "      --shares M          jobs asking for a share of one "
            "GPU (gpu_milli): real\n"
            "                          (default: several share a device, "
            "best fit) or\n"
            "                          round-up (a whole GPU each)\n"
            "      --parity SIM        a peer simulator's world: tiresias "
            "(GPUs as one\n"
            "                          pool, free preemption, no restart "
            "cost, whole\n"
            "                          seconds; tiresias in mode=artifact), "
            "helios\n"
            "                          (consolidate placement, no "
            "preemption, whole\n"
            "                          seconds; qssf in mode=artifact) or "
            "gavel\n"
            "                          (Gavel's throughputs, free "
            "preemption, no\n"
            "                          restart cost; gavel and allox "
            "with\n"
            "                          reset_min=1920, remaining=true, "
            "fill=1,\n"
            "                          window=100000)\n");
    if (!demo)
        fputs("\nmulti-tenant pooling (see docs/pooling.md):\n"
              "      --tenants FILE      tenants: guarantees, weights, caps "
              "(JSON)\n"
              "      --preemption M      graceful (default: signal, checkpoint "
              "within the grace,\n"
              "                          stop, pay the restart) or free "
              "(instant, lossless:\n"
              "                          parity with the published "
              "simulators); one model\n"
              "                          for every policy\n"
              "      --grace S           seconds a preempted job has to "
              "checkpoint (> 0; default:\n"
              "                          the policy's, else 120)\n"
              "      --ckpt-cost S       seconds a job needs to checkpoint "
              "(default 30)\n"
              "      --actuation-delay S seconds the world takes to carry "
              "out a start or a\n"
              "                          kill (default 0: at once)\n"
              "      --node-events FILE  nodes going down, drained, up: CSV "
              "time_s,node,state\n"
              "      --mtbf H            nodes fail at random, H hours "
              "apart on average (seeded)\n"
              "      --mttr H            and are repaired after H hours on "
              "average (default 1)\n"
              "      --speed M           types (default), gavel or "
              "gavel-spread (docs/speed.md)\n"
              "      --placer P          bestfit (default) or fgd: a job that "
              "fits a node goes\n"
              "                          where it fragments the least "
              "(docs/cluster.md)\n"
              "      --spread-speed F    a gang over several nodes runs at "
              "F x where no table\n"
              "                          says (0 < F <= 1; default 1)\n"
              "      --checkpointable W  all | none | trace (default trace)"
              "\n"
              "      --elastic W         none (default) | all (every job of "
              "2+ GPUs may shrink\n"
              "                          to --elastic-min of its GPUs) | "
              "trace (its min_gpus;\n"
              "                          the default under pollux)\n"
              "      --elastic-min F     the least part of its GPUs an "
              "elastic job keeps\n"
              "                          (0 < F <= 1; default 0.5, rounded "
              "up)\n"
              "      --resize-cost S     seconds an elastic job pays at each "
              "resize (default:\n"
              "                          the restart cost)\n"
              "      --resize-model M    scale (default: a resize changes the "
              "world size,\n"
              "                          the speed table's figure at the new "
              "size) or\n"
              "                          transparent (Singularity: world size "
              "kept,\n"
              "                          replicas time-sliced on fewer GPUs)\n"
              "      --slice-overhead F  transparent: the part of the pace "
              "time-slicing\n"
              "                          costs (0 <= F < 1; default 0)\n"
              "      --goodput P         jobs without a run time progress by "
              "Pollux's goodput\n"
              "                          model: P = pollux (bundled profiles, "
              "the default for\n"
              "                          such traces), a directory or an "
              "archive (docs/speed.md)\n"
              "      --min-run [CLASS=]S no preemption before S seconds of "
              "a run (CLASS low,\n"
              "                          normal, high; e.g. "
              "low=0,normal=600,high=3600)\n"
              "      --max-preemptions [CLASS=]N   at most N preemptions "
              "in a job's life\n"
              "      --half-life S       decay of past usage (default "
              "86400)\n"
              "      --sweep-load LIST   run at each offered load (e.g. "
              "0.6,0.8,1.0,1.2): the\n"
              "                          cluster (NxG) is resized, tenants' "
              "guarantees scaled\n\n"
              "      --json              print JSON (an array for several "
              "policies)\n"
              "      --report DIR        write DIR/index.html with charts\n"
              "      --jobs-csv FILE     write one row per job "
              "(FILE.<policy>.csv for several)\n"
              "      --runs-csv FILE     write one row per run interval of "
              "a job: start, end,\n"
              "                          GPUs, where, why it ended "
              "(FILE.<policy>.csv for several)\n"
              "      --fairshare-csv FILE  write one row per interval a "
              "tenant held its fair\n"
              "                          share or was owed GPUs "
              "(FILE.<policy>.csv for several)\n"
              "      --summary-csv FILE  write one row per run: every figure "
              "of the table and\n"
              "                          what was simulated, with the "
              "command (docs/metrics.md)\n"
              "      --explain-compliance  split the fair-share samples "
              "out of compliance by\n"
              "                          cause (docs/metrics.md)\n"
              "      --skip-bad          skip malformed rows and report "
              "them\n"
              "      --no-wall           leave wall-clock figures out (for "
              "byte-identical output)\n"
              "      --no-progress       no progress line on a terminal\n"
              "  -q, --quiet             no table (with --report or "
              "--jobs-csv)\n",
              out);
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
    char *end;
    double x;

    errno = 0;
    x = strtod(s, &end);
    if (end == s || *end || errno || !isfinite(x) || x < 0 || x > 3.15e9) {
        fprintf(stderr,
                "gpupool: %s: expected seconds (a number >= 0), got '%s'\n",
                opt, s);
        return -1;
    }
    *out = x;
    return 0;
}

/* "600" for every class, or "low=0,normal=600,high=3600". */
static int parse_per_class(const char *opt, const char *s, double *out,
                           bool integer)
{
    static const char *const names[GP_NPRIO] = {"low", "normal", "high"};
    char buf[256], *save = NULL, *item;

    if (!strchr(s, '=')) {
        double x;
        if (parse_seconds(opt, s, &x) != 0)
            return -1;
        if (integer && x != floor(x)) {
            fprintf(stderr,
                    "gpupool: %s: expected a whole number, got "
                    "'%s'\n",
                    opt, s);
            return -1;
        }
        for (int k = 0; k < GP_NPRIO; k++)
            out[k] = x;
        return 0;
    }
    snprintf(buf, sizeof(buf), "%s", s);
    for (item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int k;

        if (!eq) {
            fprintf(stderr, "gpupool: %s: expected CLASS=VALUE, got '%s'\n",
                    opt, item);
            return -1;
        }
        *eq = '\0';
        for (k = 0; k < GP_NPRIO && strcmp(names[k], item) != 0; k++)
            ;
        if (k == GP_NPRIO) {
            fprintf(stderr,
                    "gpupool: %s: unknown class '%s' (low, normal, "
                    "high)\n",
                    opt, item);
            return -1;
        }
        if (parse_seconds(opt, eq + 1, &out[k]) != 0)
            return -1;
    }
    return 0;
}

static int add_opt(struct sim_args *a, const char *given)
{
    char *arg, *eq, *dot;

    if (a->nopts == MAX_OPTS) {
        fprintf(stderr, "gpupool: --opt: at most %d options\n", MAX_OPTS);
        return -1;
    }
    if (strlen(given) >= sizeof(a->opt_text[0])) {
        fprintf(stderr, "gpupool: --opt: longer than %zu bytes: '%.40s...'\n",
                sizeof(a->opt_text[0]) - 1, given);
        return -1;
    }
    arg = strcpy(a->opt_text[a->nopts], given);
    eq = strchr(arg, '=');
    if (!eq || eq == arg) {
        fprintf(stderr,
                "gpupool: --opt: expected [POLICY.]KEY=VALUE, got "
                "'%s'\n",
                arg);
        return -1;
    }
    *eq = '\0';
    dot = strchr(arg, '.');
    if (dot && dot < eq) {
        *dot = '\0';
        a->opt_policy[a->nopts] = arg;
        a->opts[a->nopts].key = dot + 1;
    } else {
        a->opt_policy[a->nopts] = NULL;
        a->opts[a->nopts].key = arg;
    }
    a->opts[a->nopts].value = eq + 1;
    a->nopts++;
    return 0;
}

/* Edit distance (insertions, deletions, substitutions) of two short
 * words, for "did you mean". Words longer than 31 characters are far. */
static size_t distance(const char *x, const char *y)
{
    size_t nx = strlen(x), ny = strlen(y), row[32];

    if (nx > 31 || ny > 31)
        return SIZE_MAX;
    for (size_t j = 0; j <= ny; j++)
        row[j] = j;
    for (size_t i = 1; i <= nx; i++) {
        size_t diag = row[0];

        row[0] = i;
        for (size_t j = 1; j <= ny; j++) {
            size_t up = row[j], best = diag + (x[i - 1] != y[j - 1]);

            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[ny];
}

/* A peer simulator's world, as --parity sets it and the output states. */
struct parity {
    const char *name;
    const char *placement;    /* the only placement model it has (NULL: any) */
    const char *policy;       /* whose options below it sets: a comma-
                                 separated list; those run get them */
    const struct gp_kv *opts; /* the policy's options for the peer's ways,
                                 each unless given */
    size_t nopts;
    bool whole_seconds; /* its clock counts whole seconds */
    bool gavel_speeds;  /* Gavel's throughputs (--speed gavel) */
    const char *line;   /* the output's `parity` line */
};

static const struct gp_kv artifact_mode[] = {{"mode", "artifact"}};
static const struct gp_kv gavel_ways[] = {{"reset_min", "1920"},
                                          {"remaining", "true"},
                                          {"fill", "1"},
                                          {"window", "100000"}};

static const struct parity parities[] = {
    /* github SymbioticLab/Tiresias, simulator/ */
    {"tiresias", "count", "tiresias", artifact_mode, 1, true, false,
     "tiresias (the published Tiresias simulator's world: GPUs as one "
     "pool, free preemption, no restart cost, events only, whole seconds; "
     "tiresias in mode=artifact)"},
    /* github S-Lab-System-Group/HeliosArtifact, framework/QSSF Service/ */
    {"helios", "consolidate", "qssf", artifact_mode, 1, true, false,
     "helios (the published Helios QSSF simulator's world: consolidate "
     "placement, no preemption, no restart cost, a look every second, "
     "whole seconds; qssf in mode=artifact)"},
    /* github stanford-futuredata/gavel, scheduler/ (simulate=True) */
    {"gavel", NULL, "gavel,allox", gavel_ways, 4, false, true,
     "gavel (the published Gavel simulator's world: Gavel's throughputs, "
     "free preemption, no restart cost; gavel and allox with "
     "reset_min=1920, remaining=true, fill=1 and window=100000)"},
};

static const struct parity *parity_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof(parities) / sizeof(*parities); i++)
        if (strcmp(parities[i].name, name) == 0)
            return &parities[i];
    return NULL;
}

/* Is `name` one of the comma-separated `list` (NULL: the default, fifo)? */
static bool in_list(const char *list, const char *name)
{
    size_t n = strlen(name);

    if (!list)
        list = "fifo";
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, ",");

        if (len == n && strncmp(p, name, n) == 0)
            return true;
        p += len;
        if (*p)
            p++;
    }
    return false;
}

/* The parity's options for one of its policies, each unless given. */
static int add_parity_opts(struct sim_args *a, const struct parity *par,
                           char *policy)
{
    for (size_t i = 0; i < par->nopts; i++) {
        bool given = false;

        for (size_t k = 0; k < a->nopts; k++)
            given |=
                strcmp(a->opts[k].key, par->opts[i].key) == 0 &&
                (!a->opt_policy[k] || strcmp(a->opt_policy[k], policy) == 0);
        if (given)
            continue;
        if (a->nopts == MAX_OPTS) {
            fprintf(stderr, "gpupool: --opt: at most %d options\n", MAX_OPTS);
            return -1;
        }
        a->opt_policy[a->nopts] = policy;
        a->opts[a->nopts] = par->opts[i];
        a->nopts++;
    }
    return 0;
}

/* --parity tiresias: the published Tiresias simulator's world (github
 * SymbioticLab/Tiresias, simulator/): GPUs as one pool, preemption instant
 * and lossless, no restart cost, events only (no periodic rounds), whole
 * seconds, and tiresias in its artifact mode.
 * --parity helios: the Helios artifact's QSSF simulator (github
 * S-Lab-System-Group/HeliosArtifact, framework/QSSF Service/): its
 * consolidate placement, no preemption (qssf never preempts; the model is
 * free so that none would cost anything), no restart cost, whole seconds,
 * and qssf in its artifact mode, which itself asks for the rounds of the
 * simulator's every-second look that can change anything.
 * An option given that says otherwise is an error, not silently
 * replaced. */
static int set_parity(struct sim_args *a)
{
    const struct parity *par = parity_find(a->parity);
    const char *clash = NULL;

    if (!par) {
        fprintf(stderr,
                "gpupool: --parity: expected tiresias, helios or gavel, got "
                "'%s'\n",
                a->parity);
        return 2;
    }
    if (par->placement && a->placement &&
        strcmp(a->placement, par->placement) != 0)
        clash = strcmp(par->placement, "count") == 0
                    ? "--placement (its GPUs are one pool: count)"
                    : "--placement (it places by consolidate)";
    else if (par->gavel_speeds && a->speed_given &&
             (!a->gavel_speeds || a->gavel_spread))
        clash = "--speed (its throughputs are Gavel's: gavel)";
    else if (a->preemption_given && a->preemption != GP_PREEMPTION_FREE)
        clash = "--preemption (its preemption is free)";
    else if (a->restart_given && a->restart_cost_s != 0)
        clash = "--restart-cost (it has none)";
    else if (a->round_given && a->round_s != 0)
        clash = par->gavel_speeds ? "--round (its rounds are gavel's own)"
                                  : "--round (it decides at events only)";
    if (clash) {
        fprintf(stderr, "gpupool: --parity %s: conflicts with %s\n", par->name,
                clash);
        return 2;
    }
    a->parity_line = par->line;
    if (par->placement)
        a->placement = par->placement;
    if (par->gavel_speeds)
        a->gavel_speeds = true;
    a->preemption = GP_PREEMPTION_FREE;
    a->restart_cost_s = 0;
    a->round_s = 0;
    {
        /* the parity's policies that run get its options; with none of
         * them in --policy, the first (and check_opts says it is not run) */
        static char names[64];
        char *save = NULL, *name, *first;
        bool any = false;

        snprintf(names, sizeof(names), "%s", par->policy);
        first = strtok_r(names, ",", &save);
        for (name = first; name; name = strtok_r(NULL, ",", &save))
            if (in_list(a->policies, name)) {
                any = true;
                if (add_parity_opts(a, par, name) != 0)
                    return 2;
            }
        if (!any && add_parity_opts(a, par, first) != 0)
            return 2;
    }
    return 0;
}

/* One line for an option getopt did not take (ch '?': unknown, ':': its
 * value missing), with the nearest known option when one is close, and
 * the hint; never the whole usage. */
static void bad_option(const struct option *longopts, char **argv, int ch,
                       bool demo)
{
    const char *cmd = demo ? "demo" : "sim";
    const char *arg = argv[optind - 1], *near = NULL;
    char name[64];
    size_t best = 3; /* at most 2 edits away */

    /* a short option is named by optopt; a long one by its argument */
    if (strncmp(arg, "--", 2) != 0 && optopt > 0 && optopt < 128)
        snprintf(name, sizeof(name), "-%c", optopt);
    else
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
    for (size_t i = 0; ch == '?' && name[1] == '-' && longopts[i].name; i++)
        if (strcmp(name + 2, longopts[i].name) == 0) {
            fprintf(stderr,
                    "gpupool %s: option '%s' takes no value; see `gpupool "
                    "%s --help`\n",
                    cmd, name, cmd);
            return;
        }
    if (ch == ':') {
        fprintf(stderr,
                "gpupool %s: option '%s' needs a value; see `gpupool %s "
                "--help`\n",
                cmd, name, cmd);
        return;
    }
    for (size_t i = 0; name[0] == '-' && name[1] == '-' && longopts[i].name;
         i++) {
        size_t d = distance(name + 2, longopts[i].name);

        if (d < best) {
            best = d;
            near = longopts[i].name;
        }
    }
    if (near)
        fprintf(stderr,
                "gpupool %s: unknown option '%s' (did you mean '--%s'?); see "
                "`gpupool %s --help`\n",
                cmd, name, near, cmd);
    else
        fprintf(stderr,
                "gpupool %s: unknown option '%s'; see `gpupool %s --help`\n",
                cmd, name, cmd);
}

static int parse_args(int argc, char **argv, struct sim_args *a)
{
    enum {
        O_FORMAT = 256,
        O_AUX,
        O_PLACEMENT,
        O_OPT,
        O_RESTART,
        O_ROUND,
        O_PARITY,
        O_SEED,
        O_JSON,
        O_REPORT,
        O_JOBS,
        O_RUNS,
        O_FAIRSHARE,
        O_SUMMARY,
        O_EXPLAIN,
        O_SKIP,
        O_NOWALL,
        O_NOPROG,
        O_TENANTS,
        O_GRACE,
        O_PREEMPTION,
        O_SHARES,
        O_CKPT_COST,
        O_DELAY,
        O_NODE_EVENTS,
        O_SPEED,
        O_SPREAD,
        O_PLACER,
        O_MTBF,
        O_MTTR,
        O_HALF_LIFE,
        O_MIN_RUN,
        O_MAX_PREEMPT,
        O_CKPT,
        O_ELASTIC,
        O_ELASTIC_MIN,
        O_RESIZE_COST,
        O_RESIZE_MODEL,
        O_GOODPUT,
        O_SLICE_OVERHEAD,
        O_SWEEP
    };
    static const struct option longopts[] = {
        {"trace", required_argument, NULL, 't'},
        {"format", required_argument, NULL, O_FORMAT},
        {"trace-aux", required_argument, NULL, O_AUX},
        {"cluster", required_argument, NULL, 'c'},
        {"placement", required_argument, NULL, O_PLACEMENT},
        {"policy", required_argument, NULL, 'p'},
        {"opt", required_argument, NULL, O_OPT},
        {"restart-cost", required_argument, NULL, O_RESTART},
        {"round", required_argument, NULL, O_ROUND},
        {"seed", required_argument, NULL, O_SEED},
        {"json", no_argument, NULL, O_JSON},
        {"report", required_argument, NULL, O_REPORT},
        {"jobs-csv", required_argument, NULL, O_JOBS},
        {"runs-csv", required_argument, NULL, O_RUNS},
        {"fairshare-csv", required_argument, NULL, O_FAIRSHARE},
        {"summary-csv", required_argument, NULL, O_SUMMARY},
        {"explain-compliance", no_argument, NULL, O_EXPLAIN},
        {"skip-bad", no_argument, NULL, O_SKIP},
        {"no-wall", no_argument, NULL, O_NOWALL},
        {"no-progress", no_argument, NULL, O_NOPROG},
        {"tenants", required_argument, NULL, O_TENANTS},
        {"grace", required_argument, NULL, O_GRACE},
        {"preemption", required_argument, NULL, O_PREEMPTION},
        {"shares", required_argument, NULL, O_SHARES},
        {"ckpt-cost", required_argument, NULL, O_CKPT_COST},
        {"actuation-delay", required_argument, NULL, O_DELAY},
        {"node-events", required_argument, NULL, O_NODE_EVENTS},
        {"speed", required_argument, NULL, O_SPEED},
        {"spread-speed", required_argument, NULL, O_SPREAD},
        {"placer", required_argument, NULL, O_PLACER},
        {"parity", required_argument, NULL, O_PARITY},
        {"mtbf", required_argument, NULL, O_MTBF},
        {"mttr", required_argument, NULL, O_MTTR},
        {"half-life", required_argument, NULL, O_HALF_LIFE},
        {"min-run", required_argument, NULL, O_MIN_RUN},
        {"max-preemptions", required_argument, NULL, O_MAX_PREEMPT},
        {"checkpointable", required_argument, NULL, O_CKPT},
        {"elastic", required_argument, NULL, O_ELASTIC},
        {"elastic-min", required_argument, NULL, O_ELASTIC_MIN},
        {"resize-cost", required_argument, NULL, O_RESIZE_COST},
        {"resize-model", required_argument, NULL, O_RESIZE_MODEL},
        {"goodput", required_argument, NULL, O_GOODPUT},
        {"slice-overhead", required_argument, NULL, O_SLICE_OVERHEAD},
        {"sweep-load", required_argument, NULL, O_SWEEP},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int ch;

    optind = 1;
    opterr = 0; /* bad_option says it, in one line */
    while ((ch = getopt_long(argc, argv, ":t:c:p:qvh", longopts, NULL)) != -1) {
        switch (ch) {
        case 't':
            a->trace = optarg;
            break;
        case O_FORMAT:
            a->format = optarg;
            break;
        case O_AUX:
            a->trace_aux = optarg;
            break;
        case 'c':
            a->cluster = optarg;
            break;
        case O_PLACEMENT:
            a->placement = optarg;
            break;
        case 'p':
            a->policies = optarg;
            break;
        case O_OPT:
            if (add_opt(a, optarg) != 0)
                return 2;
            break;
        case O_RESTART:
            if (parse_seconds("--restart-cost", optarg, &a->restart_cost_s))
                return 2;
            a->restart_given = true;
            break;
        case O_PARITY:
            a->parity = optarg;
            break;
        case O_ROUND:
            if (parse_seconds("--round", optarg, &a->round_s))
                return 2;
            a->round_given = true;
            break;
        case O_SEED: {
            char *end;
            errno = 0;
            a->seed = strtoull(optarg, &end, 10);
            if (end == optarg || *end || errno || optarg[0] == '-') {
                fprintf(stderr,
                        "gpupool: --seed: expected a non-negative "
                        "integer, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        }
        case O_JSON:
            a->json = true;
            break;
        case O_REPORT:
            a->report = optarg;
            break;
        case O_JOBS:
            a->jobs_csv = optarg;
            break;
        case O_EXPLAIN:
            a->explain = true;
            break;
        case O_RUNS:
            a->runs_csv = optarg;
            break;
        case O_FAIRSHARE:
            a->fairshare_csv = optarg;
            break;
        case O_SUMMARY:
            a->summary_csv = optarg;
            break;
        case O_SKIP:
            a->skip_bad = true;
            break;
        case O_NOWALL:
            a->with_wall = false;
            break;
        case O_NOPROG:
            a->progress = false;
            break;
        case 'q':
            a->quiet = true;
            break;
        case O_TENANTS:
            a->tenants = optarg;
            break;
        case O_SWEEP:
            a->sweep = optarg;
            break;
        case O_GRACE:
            if (parse_seconds("--grace", optarg, &a->grace_s))
                return 2;
            if (a->grace_s == 0) {
                fprintf(stderr, "gpupool: --grace: must be > 0 (the instant "
                                "model is --preemption free)\n");
                return 2;
            }
            break;
        case O_SHARES:
            if (!strcmp(optarg, "real")) {
                a->shares_round_up = false;
            } else if (!strcmp(optarg, "round-up")) {
                a->shares_round_up = true;
            } else {
                fprintf(stderr,
                        "gpupool: --shares: expected real or round-up, "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_PREEMPTION:
            a->preemption_given = true;
            if (!strcmp(optarg, "graceful")) {
                a->preemption = GP_PREEMPTION_GRACEFUL;
            } else if (!strcmp(optarg, "free")) {
                a->preemption = GP_PREEMPTION_FREE;
            } else {
                fprintf(stderr,
                        "gpupool: --preemption: expected graceful or free, "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_CKPT_COST:
            if (parse_seconds("--ckpt-cost", optarg, &a->ckpt_cost_s))
                return 2;
            break;
        case O_DELAY:
            if (parse_seconds("--actuation-delay", optarg, &a->delay_s))
                return 2;
            break;
        case O_NODE_EVENTS:
            a->node_events = optarg;
            break;
        case O_SPEED:
            a->speed_given = true;
            a->gavel_speeds = a->gavel_spread = false;
            if (!strcmp(optarg, "gavel")) {
                a->gavel_speeds = true;
            } else if (!strcmp(optarg, "gavel-spread")) {
                a->gavel_speeds = a->gavel_spread = true;
            } else if (strcmp(optarg, "types") != 0) {
                fprintf(stderr,
                        "gpupool: --speed: expected types, gavel or "
                        "gavel-spread, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_PLACER:
            a->placer = optarg;
            break;
        case O_SPREAD: {
            char *end;
            double x = strtod(optarg, &end);

            if (end == optarg || *end || !(x > 0 && x <= 1)) {
                fprintf(stderr,
                        "gpupool: --spread-speed: expected a number in "
                        "(0, 1], got '%s'\n",
                        optarg);
                return 2;
            }
            a->spread_speed = x;
            break;
        }
        case O_MTBF: /* hours, read as a count of seconds then scaled */
            if (parse_seconds("--mtbf", optarg, &a->mtbf_h))
                return 2;
            break;
        case O_MTTR:
            if (parse_seconds("--mttr", optarg, &a->mttr_h))
                return 2;
            break;
        case O_HALF_LIFE:
            if (parse_seconds("--half-life", optarg, &a->half_life_s))
                return 2;
            if (a->half_life_s <= 0) {
                fprintf(stderr, "gpupool: --half-life: must be > 0\n");
                return 2;
            }
            break;
        case O_MIN_RUN:
            if (parse_per_class("--min-run", optarg, a->min_run_s, false))
                return 2;
            break;
        case O_MAX_PREEMPT: {
            double n[GP_NPRIO];
            for (int k = 0; k < GP_NPRIO; k++)
                n[k] = a->max_preemptions[k] == UINT32_MAX
                           ? -1.0
                           : (double)a->max_preemptions[k];
            if (parse_per_class("--max-preemptions", optarg, n, true))
                return 2;
            for (int k = 0; k < GP_NPRIO; k++)
                a->max_preemptions[k] = n[k] < 0 ? UINT32_MAX : (uint32_t)n[k];
            break;
        }
        case O_CKPT:
            if (strcmp(optarg, "all") == 0)
                a->ckpt = GP_CKPT_ALL;
            else if (strcmp(optarg, "none") == 0)
                a->ckpt = GP_CKPT_NONE;
            else if (strcmp(optarg, "trace") == 0)
                a->ckpt = GP_CKPT_TRACE;
            else {
                fprintf(stderr,
                        "gpupool: --checkpointable: expected all, "
                        "none or trace, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_ELASTIC:
            a->elastic_given = true;
            if (strcmp(optarg, "all") == 0)
                a->elastic = GP_ELASTIC_ALL;
            else if (strcmp(optarg, "none") == 0)
                a->elastic = GP_ELASTIC_NONE;
            else if (strcmp(optarg, "trace") == 0)
                a->elastic = GP_ELASTIC_TRACE;
            else {
                fprintf(stderr,
                        "gpupool: --elastic: expected none, all or trace, "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case O_ELASTIC_MIN: {
            char *end;
            double x = strtod(optarg, &end);

            if (end == optarg || *end || !(x > 0 && x <= 1)) {
                fprintf(stderr,
                        "gpupool: --elastic-min: expected a number in "
                        "(0, 1], got '%s'\n",
                        optarg);
                return 2;
            }
            a->elastic_min = x;
            break;
        }
        case O_RESIZE_COST:
            if (parse_seconds("--resize-cost", optarg, &a->resize_cost_s))
                return 2;
            break;
        case O_RESIZE_MODEL:
            if (strcmp(optarg, "scale") != 0 &&
                strcmp(optarg, "transparent") != 0) {
                fprintf(stderr,
                        "gpupool: --resize-model: expected scale or "
                        "transparent, got '%s'\n",
                        optarg);
                return 2;
            }
            a->resize_transparent = strcmp(optarg, "transparent") == 0;
            break;
        case O_GOODPUT:
            a->goodput = optarg;
            break;
        case O_SLICE_OVERHEAD: {
            char *end;
            double x = strtod(optarg, &end);

            if (end == optarg || *end || !(x >= 0 && x < 1)) {
                fprintf(stderr,
                        "gpupool: --slice-overhead: expected a number from "
                        "0 to below 1, got '%s'\n",
                        optarg);
                return 2;
            }
            a->slice_overhead = x;
            break;
        }
        case 'v':
            a->verbose++;
            break;
        case 'h':
            sim_usage(stdout, a->demo);
            return 1;
        default:
            bad_option(longopts, argv, ch, a->demo);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr,
                "gpupool %s: unexpected argument '%s'; see `gpupool %s "
                "--help`\n",
                a->demo ? "demo" : "sim", argv[optind],
                a->demo ? "demo" : "sim");
        return 2;
    }
    if (!a->trace && !a->demo) {
        fprintf(stderr, "gpupool sim: --trace FILE is required (or try "
                        "'gpupool demo')\n");
        return 2;
    }
    if (a->slice_overhead > 0 && !a->resize_transparent) {
        fprintf(stderr, "gpupool: --slice-overhead: only with --resize-model "
                        "transparent\n");
        return 2;
    }
    return a->parity ? set_parity(a) : 0;
}

/* Write one of the CSVs (jobs, runs) of a run to BASE, or to
 * BASE.<policy>.csv when there are several runs. */
static int write_csv(const char *base, const char *policy, bool several,
                     struct gp_metrics *m,
                     int (*write)(const struct gp_metrics *, FILE *))
{
    char path[4096];
    FILE *f;
    int rc;

    if (several)
        snprintf(path, sizeof(path), "%s.%s.csv", base, policy);
    else
        snprintf(path, sizeof(path), "%s", base);
    if (!(f = fopen(path, "w"))) {
        fprintf(stderr, "gpupool: %s: %s\n", path, strerror(errno));
        return -1;
    }
    rc = write(m, f);
    if (fclose(f) != 0 || rc != GP_OK) {
        fprintf(stderr, "gpupool: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

static int write_summary(const char *path, struct gp_metrics *const *runs,
                         size_t n, bool with_wall)
{
    FILE *f = fopen(path, "w");
    int rc;

    if (!f) {
        fprintf(stderr, "gpupool: --summary-csv: %s: %s\n", path,
                strerror(errno));
        return -1;
    }
    rc = gp_output_summary_csv(f, runs, n, true, with_wall);
    if (fclose(f) != 0 || rc != GP_OK) {
        fprintf(stderr, "gpupool: --summary-csv: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

/* Offered work per second of the trace, in GPUs: what a cluster must have
 * to run at load 1.0. */
static double offered_gpus(const struct gp_workload *wl)
{
    double work = 0, span;

    if (wl->n < 2)
        return 0;
    for (size_t i = 0; i < wl->n; i++)
        work += (double)wl->jobs[i].duration_us * wl->jobs[i].gpus;
    span = (double)(wl->jobs[wl->n - 1].submit_us - wl->jobs[0].submit_us);
    return span > 0 ? work / span : 0;
}

/* The spec of a uniform cluster resized for an offered load. */
/* FGD steers by the workload's task shapes: the trace's jobs that fit a
 * node, each weighted by how many jobs ask for it. */
static int set_fgd(struct gp_cluster *c, const struct gp_workload *wl,
                   struct gp_diag *diag)
{
    struct gp_shape shapes[GP_MAX_NODE_GPUS + 1] = {{0}};
    uint32_t n = 0, max = 0;
    int rc;

    for (uint32_t t = 0; t < gp_cluster_ntypes(c); t++)
        if (gp_cluster_max_up_node_gpus(c, (uint8_t)t) > max)
            max = gp_cluster_max_up_node_gpus(c, (uint8_t)t);
    for (size_t i = 0; i < wl->n; i++) {
        uint32_t g = wl->jobs[i].gpus;

        if (g >= 1 && g <= max)
            shapes[g].weight += 1;
    }
    for (uint32_t g = 1; g <= max; g++)
        if (shapes[g].weight > 0) {
            shapes[n] = shapes[g];
            shapes[n++].gpus = g;
        }
    if (n == 0)
        return GP_OK;
    if ((rc = gp_cluster_set_workload(c, shapes, n, diag)) != GP_OK)
        return rc;
    return gp_cluster_set_share_placer(c, GP_SHARE_FGD);
}

static int sweep_spec(const char *base, const struct gp_workload *wl,
                      double load, char *out, size_t len, uint64_t *gpus)
{
    struct gp_cluster *c;
    struct gp_diag diag = {{0}, {0}};
    uint32_t g, n, biggest = 0;
    uint8_t type;
    char buf[600];
    int rc;

    if ((rc = gp_cluster_from_spec(base, &c, &diag)) != GP_OK) {
        fprintf(stderr, "gpupool: --cluster: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        return -1;
    }
    g = gp_cluster_max_node_gpus(c, GP_TYPE_ANY);
    type = gp_cluster_node_type(c, 0);
    for (uint32_t i = 0; i < gp_cluster_nnodes(c); i++) {
        if (gp_cluster_node_gpus(c, i) != g ||
            gp_cluster_node_type(c, i) != type) {
            gp_cluster_free(c);
            fprintf(stderr,
                    "gpupool: --sweep-load needs a uniform cluster "
                    "(NxG), not '%s'\n",
                    base);
            return -1;
        }
    }
    for (size_t i = 0; i < wl->n; i++)
        if (wl->jobs[i].gpus > biggest)
            biggest = wl->jobs[i].gpus;
    n = (uint32_t)llround(offered_gpus(wl) / load / g);
    if (n < (biggest + g - 1) / g)
        n = (biggest + g - 1) / g; /* the largest gang must fit */
    if (n < 1)
        n = 1;
    snprintf(out, len, "%ux%u:%s", n, g, gp_cluster_type_name(c, type));
    *gpus = (uint64_t)n * g;
    gp_cluster_free(c);
    return 0;
}

/* Scale the tenants' guarantees (largest remainder, so they still add up),
 * caps and lending limits by f. A sweep's cluster has one GPU type, on
 * which a guarantee by type is the guarantee itself: the split is
 * dropped. */
static void scale_tenants(const struct gp_tenant_list *tl,
                          struct gp_tenant_spec *out, double f)
{
    uint64_t total = 0, target = 0, sum = 0;

    for (size_t i = 0; i < tl->n; i++) {
        out[i] = tl->t[i];
        out[i].by_type = NULL;
        out[i].nby_type = 0;
        total += tl->t[i].guarantee;
        out[i].guarantee = (uint32_t)floor(tl->t[i].guarantee * f);
        sum += out[i].guarantee;
    }
    target = (uint64_t)llround((double)total * f);
    while (sum < target) {
        size_t best = 0;
        double rem = -1;
        for (size_t i = 0; i < tl->n; i++) {
            double r = tl->t[i].guarantee * f - out[i].guarantee;
            if (r > rem + 1e-12) {
                rem = r;
                best = i;
            }
        }
        out[best].guarantee++;
        sum++;
    }
    for (size_t i = 0; i < tl->n; i++) {
        if (out[i].cap) {
            out[i].cap = (uint32_t)ceil(tl->t[i].cap * f);
            if (out[i].cap < out[i].guarantee)
                out[i].cap = out[i].guarantee;
        }
        out[i].lend_limit = (uint32_t)floor(tl->t[i].lend_limit * f);
        if (out[i].lend_limit > out[i].guarantee)
            out[i].lend_limit = out[i].guarantee;
    }
}

/* The --opt options that go to a policy: those for every policy and its
 * own; returns how many were written to opts (MAX_OPTS at most). */
static size_t opts_for(const struct sim_args *a,
                       const struct gp_policy_ops *pol, struct gp_kv *opts)
{
    size_t n = 0;

    for (size_t k = 0; k < a->nopts; k++)
        if (!a->opt_policy[k] || strcmp(a->opt_policy[k], pol->name) == 0)
            opts[n++] = a->opts[k];
    return n;
}

/* Every policy takes its options (usage errors: 2), tried before the
 * trace is read; the core asks again for each run. */
static int check_opts(const struct sim_args *a,
                      const struct gp_policy_ops *const *pols, size_t npol,
                      const struct gp_env *env)
{
    for (size_t i = 0; i < npol; i++) {
        struct gp_kv opts[MAX_OPTS];
        struct gp_policy_args args = {opts, opts_for(a, pols[i], opts), env};
        struct gp_diag diag = {{0}, {0}};
        void *priv = NULL;
        char buf[600];
        int rc;

        if (pols[i]->init) {
            if ((rc = pols[i]->init(&priv, &args, &diag)) != GP_OK) {
                fprintf(stderr, "gpupool: --opt: %s: %s\n", pols[i]->name,
                        gp_diag_format(&diag, rc, buf, sizeof(buf)));
                return 2;
            }
            if (pols[i]->fini)
                pols[i]->fini(priv);
        } else if (args.nopts) {
            fprintf(stderr, "gpupool: --opt %s: policy '%s' takes no options\n",
                    opts[0].key, pols[i]->name);
            return 2;
        }
    }
    return 0;
}

/* A pooling policy (one that divides by guarantees: pool, pool-noreclaim,
 * static-quota) without tenants is refused: 2. */
static int need_tenants(const struct gp_tenant_list *tl,
                        const struct gp_policy_ops *const *pols, size_t npol)
{
    for (size_t i = 0; i < npol && !tl->n; i++)
        if (pols[i]->needs_guarantees) {
            fprintf(stderr,
                    "gpupool: --policy %s shares GPUs among tenants by "
                    "their guarantees and needs --tenants FILE (see "
                    "docs/tenants.md)\n",
                    pols[i]->name);
            return 2;
        }
    return 0;
}

/* Jobs without a run time whose class names a model progress by Pollux's
 * goodput model: --goodput's profiles, the bundled ones by default. A job
 * without a run time the model cannot follow is an error naming it. */
static int load_goodput(const struct sim_args *a, const struct gp_workload *wl,
                        struct gp_goodput **out)
{
    struct gp_diag diag = {0};
    char buf[640];
    bool need = a->goodput != NULL;
    int rc;

    for (size_t k = 0; k < wl->n && !need; k++)
        need = wl->jobs[k].duration_us == 0;
    if (!need)
        return 0;
    if ((rc = gp_goodput_load(out, a->goodput, &diag)) != GP_OK) {
        fprintf(stderr, "gpupool: --goodput: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        return 2;
    }
    for (size_t k = 0; k < wl->n; k++) {
        const struct gp_job_spec *j = &wl->jobs[k];
        uint32_t m;

        if (j->duration_us == 0 &&
            !(j->job_class && gp_goodput_find(*out, j->job_class, &m))) {
            fprintf(stderr,
                    "gpupool: job %s has no run time and its class '%s' is "
                    "no model of %s (models:",
                    j->id ? j->id : "?", j->job_class ? j->job_class : "",
                    a->goodput ? a->goodput : "the bundled profiles");
            for (uint32_t i = 0; i < gp_goodput_nmodels(*out); i++)
                fprintf(stderr, " %s", gp_goodput_name(*out, i));
            fprintf(stderr, ")\n");
            return 2;
        }
    }
    return 0;
}

/* Tenants against the trace, warned on stderr: tenants of the file no job
 * uses (nor a child of theirs), and jobs whose tenant the file does not
 * name (they get no guarantee; static-quota gives them nothing). */
static int check_tenants(const struct sim_args *a,
                         const struct gp_tenant_list *tl,
                         const struct gp_workload *wl)
{
    const char *file = a->tenants ? a->tenants : "the demo's tenants";
    const char *stray = NULL;
    uint64_t outside = 0;
    size_t unused = 0;
    bool *used, more = true;

    if (!tl->n)
        return 0;
    if (!(used = calloc(tl->n, sizeof(*used)))) {
        fprintf(stderr, "gpupool: out of memory\n");
        return 1;
    }
    for (size_t j = 0; j < wl->n; j++) {
        const char *t = wl->jobs[j].tenant ? wl->jobs[j].tenant : "";
        size_t k = 0;

        while (k < tl->n && strcmp(tl->t[k].name, t) != 0)
            k++;
        if (k < tl->n) {
            used[k] = true;
        } else {
            outside++;
            if (!stray)
                stray = t;
        }
    }
    while (more) { /* a parent is used when a child is */
        more = false;
        for (size_t k = 0; k < tl->n; k++)
            for (size_t p = 0; used[k] && tl->t[k].parent && p < tl->n; p++)
                if (!used[p] && strcmp(tl->t[p].name, tl->t[k].parent) == 0)
                    used[p] = more = true;
    }
    for (size_t k = 0; k < tl->n; k++)
        unused += !used[k];
    if (unused) {
        fprintf(stderr,
                "gpupool: warning: no job in the trace belongs to %zu of "
                "the %zu tenants in %s:",
                unused, tl->n, file);
        for (size_t k = 0, said = 0; k < tl->n; k++)
            if (!used[k] && said++ < 8)
                fprintf(stderr, " %s", tl->t[k].name);
        fprintf(stderr, "%s\n", unused > 8 ? " ..." : "");
    }
    if (outside)
        fprintf(stderr,
                "gpupool: warning: %llu of %zu jobs belong to a tenant "
                "not in %s (e.g. '%s'): they have no guarantee\n",
                (unsigned long long)outside, wl->n, file,
                *stray ? stray : "(none)");
    free(used);
    return 0;
}

/* Guarantees (of the top-level tenants) beyond the cluster's GPUs cannot
 * all be kept: say so, once per cluster size. */
static void check_guarantees(const struct gp_tenant_spec *t, size_t n,
                             uint64_t gpus, uint64_t *warned_for)
{
    uint64_t sum = 0;

    for (size_t i = 0; i < n; i++)
        if (!t[i].parent)
            sum += t[i].guarantee;
    if (sum <= gpus || *warned_for == gpus)
        return;
    *warned_for = gpus;
    fprintf(stderr,
            "gpupool: warning: the tenants' guarantees sum to %llu GPUs, "
            "more than the cluster's %llu: not all can be kept\n",
            (unsigned long long)sum, (unsigned long long)gpus);
}

static int run_sim(struct sim_args *a, int argc, char **argv,
                   struct gp__sim_keep *keep)
{
    const struct gp_policy_ops *pols[MAX_POLICIES];
    struct gp_metrics *runs[MAX_POLICIES] = {0};
    size_t npol = 0, nrun = 0;
    struct gp_trace_opts topts = {a->format, a->trace_aux, a->skip_bad};
    struct gp_env env = {.log = log_stderr,
                         .log_level = a->verbose ? GP_LOG_DEBUG : GP_LOG_WARN,
                         .seed = a->seed};
    struct gp_workload wl;
    struct gp_tenant_list tl;
    struct gp_trace *trace = NULL;
    struct gp_diag diag = {{0}, {0}};
    enum gp_place_model model = GP_PLACE_PACK;
    bool whole;
    enum gp_share_placer placer = GP_SHARE_BESTFIT;
    const char *cluster_spec = a->cluster;
    char buf[600], cmdline[2048] = "", polbuf[512], cluster_desc[1024];
    struct gp_node_events nev = {0};
    struct gp_speed_table *speeds = NULL;
    struct gp_goodput *goodput = NULL;
    double loads[16];
    size_t nloads = 0;
    uint64_t base_gpus = 0, warned_for = 0;
    struct gp_tenant_spec *scaled = NULL;
    int rc, status = 1;
    double t0 = now_s();

    gp_workload_init(&wl);
    gp_tenant_list_init(&tl);
    if (a->demo && !a->tenants &&
        (rc =
             gp_tenants_parse(&tl, (const char *)gp_demo_tenants,
                              gp_demo_tenants_len, "philly-vcs.json", &diag))) {
        fprintf(stderr, "gpupool: demo tenants: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        goto out;
    }
    if (a->tenants && (rc = gp_tenants_load(&tl, a->tenants, &diag))) {
        fprintf(stderr, "gpupool: --tenants: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        goto out;
    }
    if (a->placement && gp_place_model_parse(a->placement, &model) != GP_OK) {
        fprintf(stderr,
                "gpupool: --placement: expected count, pack, topo or "
                "consolidate, "
                "got '%s'\n",
                a->placement);
        status = 2;
        goto out;
    }
    if (a->placer && gp_share_placer_parse(a->placer, &placer) != GP_OK) {
        fprintf(stderr,
                "gpupool: --placer: expected bestfit or fgd, got '%s'\n",
                a->placer);
        status = 2;
        goto out;
    }
    snprintf(polbuf, sizeof(polbuf), "%s", a->policies);
    for (char *save = NULL, *name = strtok_r(polbuf, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        if (npol == MAX_POLICIES) {
            fprintf(stderr, "gpupool: --policy: at most %d policies\n",
                    MAX_POLICIES);
            status = 2;
            goto out;
        }
        if (!(pols[npol] = gp_policy_lookup(name))) {
            fprintf(stderr,
                    "gpupool: --policy: unknown policy '%s'; known:", name);
            for (size_t i = 0; gp_policy_at(i); i++)
                fprintf(stderr, " %s", gp_policy_at(i)->name);
            fprintf(stderr, "\n");
            status = 2;
            goto out;
        }
        npol++;
    }
    if (npol == 0) {
        fprintf(stderr, "gpupool: --policy: no policy given\n");
        status = 2;
        goto out;
    }
    for (size_t k = 0; k < a->nopts; k++) {
        bool found = !a->opt_policy[k];
        for (size_t i = 0; i < npol && !found; i++)
            found = strcmp(pols[i]->name, a->opt_policy[k]) == 0;
        if (!found) {
            fprintf(stderr,
                    "gpupool: --opt %s.%s: policy '%s' is not in "
                    "--policy\n",
                    a->opt_policy[k], a->opts[k].key, a->opt_policy[k]);
            status = 2;
            goto out;
        }
    }
    if ((status = need_tenants(&tl, pols, npol)) != 0 ||
        (status = check_opts(a, pols, npol, &env)) != 0)
        goto out;
    for (size_t i = 0; i < npol; i++)
        if (pols[i]->needs_nodes && model == GP_PLACE_COUNT) {
            fprintf(stderr,
                    "gpupool: --policy %s decides GPUs per node: it needs a "
                    "placement that names nodes (--placement pack, topo or "
                    "consolidate), not count\n",
                    pols[i]->name);
            status = 2;
            goto out;
        }
    status = 1;

    if (a->trace)
        rc = gp_trace_open(&trace, a->trace, &topts, &diag);
    else
        rc = gp_trace_open_mem(&trace, gp_demo_trace, gp_demo_trace_len,
                               "philly.csv.xz", &topts, &diag);
    if (rc == GP_OK)
        rc = gp_workload_load(&wl, trace, stderr, &diag);
    if (rc != GP_OK) {
        fprintf(stderr, "gpupool: %s\n",
                gp_diag_format(&diag, rc, buf, sizeof(buf)));
        goto out;
    }
    /* the peer's clock, where it counts whole seconds (submit and duration
     * rounded down, a duration to 1 s at least) */
    whole = a->parity && parity_find(a->parity) &&
            parity_find(a->parity)->whole_seconds;
    for (size_t k = 0; whole && k < wl.n; k++) {
        struct gp_job_spec *j = &wl.jobs[k];

        j->submit_us -= j->submit_us % GP_US_PER_S;
        j->duration_us -= j->duration_us % GP_US_PER_S;
        if (j->duration_us < GP_US_PER_S)
            j->duration_us = GP_US_PER_S;
    }
    if (wl.skipped)
        fprintf(stderr, "gpupool: skipped %llu of %llu rows (see above)\n",
                (unsigned long long)wl.skipped, (unsigned long long)wl.rows);
    if ((rc = load_goodput(a, &wl, &goodput)) != 0) {
        status = rc;
        goto out;
    }
    if ((rc = check_tenants(a, &tl, &wl)) != 0) {
        status = rc;
        goto out;
    }
    if (!cluster_spec) {
        if (!wl.preset[0]) {
            fprintf(stderr,
                    "gpupool: the %s format implies no cluster; give "
                    "one with --cluster (e.g. 64x8)\n",
                    wl.format);
            status = 2;
            goto out;
        }
        cluster_spec = wl.preset;
    }
    for (int i = 0, n = 0; i < argc && n < (int)sizeof(cmdline) - 2; i++)
        n += snprintf(cmdline + n, sizeof(cmdline) - (size_t)n, "%s%s",
                      i ? " " : "gpupool ", argv[i]);

    if (a->sweep) {
        char lbuf[256], *save = NULL;
        snprintf(lbuf, sizeof(lbuf), "%s", a->sweep);
        for (char *t = strtok_r(lbuf, ",", &save); t;
             t = strtok_r(NULL, ",", &save)) {
            char *end;
            double x = strtod(t, &end);
            if (end == t || *end || !(x > 0.01 && x < 100) || nloads == 16) {
                fprintf(stderr,
                        "gpupool: --sweep-load: expected up to 16 "
                        "loads in (0.01, 100), got '%s'\n",
                        t);
                status = 2;
                goto out;
            }
            loads[nloads++] = x;
        }
        base_gpus = 0;
        {
            struct gp_cluster *c;
            if (gp_cluster_from_spec(cluster_spec, &c, &diag) == GP_OK) {
                base_gpus = gp_cluster_gpus(c);
                gp_cluster_free(c);
            }
        }
        if (nloads * npol > MAX_POLICIES) {
            fprintf(stderr,
                    "gpupool: --sweep-load: at most %d runs "
                    "(loads x policies)\n",
                    MAX_POLICIES);
            status = 2;
            goto out;
        }
    } else {
        loads[nloads++] = 0; /* as given */
    }
    if (tl.n && !(scaled = calloc(tl.n, sizeof(*scaled)))) {
        fprintf(stderr, "gpupool: out of memory\n");
        goto out;
    }
    for (size_t li = 0; li < nloads; li++)
        for (size_t i = 0; i < npol; i++) {
            struct gp_kv opts[MAX_OPTS];
            size_t nopts = 0;
            struct gp_cluster *cluster = NULL;
            const char *spec_now = cluster_spec;
            char sweep_buf[128];
            uint64_t gpus_now = 0;

            if (loads[li] > 0) {
                if (sweep_spec(cluster_spec, &wl, loads[li], sweep_buf,
                               sizeof(sweep_buf), &gpus_now) != 0) {
                    status = 2;
                    goto out;
                }
                spec_now = sweep_buf;
            }
            struct gp_sim_config cfg = {
                .policy = pols[i],
                .model = model,
                .restart_cost_us = (int64_t)llround(a->restart_cost_s * 1e6),
                .round_period_us = (int64_t)llround(a->round_s * 1e6),
                .seed = a->seed,
                .progress = a->progress && isatty(2),
                .env = &env,
                .tenants = tl.t,
                .ntenants = tl.n,
                .label = NULL,
                .preemption = a->preemption,
                .shares_round_up = a->shares_round_up,
                .grace_us = a->grace_s < 0 ? GP_TIME_NONE
                                           : (int64_t)llround(a->grace_s * 1e6),
                .ckpt_cost_us = (int64_t)llround(a->ckpt_cost_s * 1e6),
                .actuation_delay_us = (int64_t)llround(a->delay_s * 1e6),
                .mtbf_s = a->mtbf_h * 3600,
                .mttr_s = a->mttr_h * 3600,
                .half_life_us = (int64_t)llround(a->half_life_s * 1e6),
                .ckpt = a->ckpt,
                /* a policy that sizes jobs by goodput takes the
                 * trace's elastic ranges unless told otherwise */
                .elastic = !a->elastic_given && pols[i]->adapts_batch
                               ? GP_ELASTIC_TRACE
                               : a->elastic,
                .elastic_min = a->elastic_min,
                .resize_transparent = a->resize_transparent,
                .slice_overhead = a->slice_overhead,
                .resize_cost_us =
                    (int64_t)llround((a->resize_cost_s < 0 ? a->restart_cost_s
                                                           : a->resize_cost_s) *
                                     1e6),
                .trace = a->trace ? a->trace : "bundled philly.csv.xz",
                .cluster_spec = spec_now,
                .parity = a->parity_line,
                .command = cmdline,
            };

            for (int k = 0; k < GP_NPRIO; k++) {
                cfg.min_run_us[k] =
                    a->min_run_s[k] < 0
                        ? -1
                        : (int64_t)llround(a->min_run_s[k] * 1e6);
                cfg.max_preemptions[k] = a->max_preemptions[k];
            }
            nopts = opts_for(a, pols[i], opts);
            cfg.policy_opts = opts;
            cfg.npolicy_opts = nopts;
            if (loads[li] > 0 && tl.n && base_gpus > 0) {
                scale_tenants(&tl, scaled,
                              (double)gpus_now / (double)base_gpus);
                cfg.tenants = scaled;
            }
            if ((rc = gp_cluster_from_spec(spec_now, &cluster, &diag))) {
                fprintf(stderr, "gpupool: --cluster: %s\n",
                        gp_diag_format(&diag, rc, buf, sizeof(buf)));
                status = 2;
                goto out;
            }
            if (placer == GP_SHARE_FGD &&
                (rc = set_fgd(cluster, &wl, &diag)) != GP_OK) {
                fprintf(stderr, "gpupool: --placer fgd: %s\n",
                        gp_diag_format(&diag, rc, buf, sizeof(buf)));
                gp_cluster_free(cluster);
                status = 2;
                goto out;
            }
            check_guarantees(cfg.tenants, cfg.ntenants,
                             gp_cluster_gpus(cluster), &warned_for);
            gp_node_events_fini(&nev);
            if (a->node_events &&
                (rc = gp_node_events_load(&nev, a->node_events, cluster,
                                          &diag)) != GP_OK) {
                fprintf(stderr, "gpupool: --node-events: %s\n",
                        gp_diag_format(&diag, rc, buf, sizeof(buf)));
                gp_cluster_free(cluster);
                status = 2;
                goto out;
            }
            cfg.node_events = a->node_events ? &nev : NULL;
            if (a->gavel_speeds && !speeds &&
                (rc = gp_trace_gavel_speeds(&speeds, a->gavel_spread)) !=
                    GP_OK) {
                fprintf(stderr, "gpupool: out of memory\n");
                gp_cluster_free(cluster);
                goto out;
            }
            cfg.speed = speeds;
            cfg.spread_speed = a->spread_speed;
            cfg.goodput = goodput;
            if (a->node_events || a->mtbf_h > 0 || a->gavel_speeds || goodput ||
                a->spread_speed > 0 || placer == GP_SHARE_FGD) {
                size_t o;

                o = (size_t)snprintf(cluster_desc, sizeof(cluster_desc), "%s",
                                     spec_now);
                if (a->node_events)
                    o += (size_t)snprintf(
                        cluster_desc + o, sizeof(cluster_desc) - o,
                        "; node events from %s", a->node_events);
                else if (a->mtbf_h > 0)
                    o += (size_t)snprintf(
                        cluster_desc + o, sizeof(cluster_desc) - o,
                        "; nodes fail at random: MTBF %g h, MTTR %g h",
                        a->mtbf_h, a->mttr_h > 0 ? a->mttr_h : 1.0);
                if (a->gavel_speeds && o < sizeof(cluster_desc))
                    o += (size_t)snprintf(
                        cluster_desc + o, sizeof(cluster_desc) - o,
                        "; speeds: Gavel's measured throughputs%s",
                        a->gavel_spread ? ", spread gangs at its figures "
                                          "for unconsolidated servers"
                                        : "");
                if (goodput && o < sizeof(cluster_desc))
                    o += (size_t)snprintf(
                        cluster_desc + o, sizeof(cluster_desc) - o,
                        "; jobs progress by Pollux's goodput model (%s)%s",
                        a->goodput ? a->goodput : "pollux",
                        pols[i]->adapts_batch
                            ? ", batch sizes adapted to each allocation"
                            : ", each job keeping its batch size");
                if (a->spread_speed > 0 && o < sizeof(cluster_desc))
                    o += (size_t)snprintf(
                        cluster_desc + o, sizeof(cluster_desc) - o,
                        "; a gang over several nodes runs at %g x "
                        "(where no table says)",
                        a->spread_speed);
                if (placer == GP_SHARE_FGD && o < sizeof(cluster_desc))
                    snprintf(cluster_desc + o, sizeof(cluster_desc) - o,
                             "; jobs that fit a node placed by FGD over the "
                             "trace's shapes");
                cfg.cluster_spec = cluster_desc;
            }
            if ((rc = gp_metrics_new(&runs[nrun])) != GP_OK) {
                gp_cluster_free(cluster);
                fprintf(stderr, "gpupool: out of memory\n");
                goto out;
            }
            nrun++;
            gp_metrics_record_runs(runs[nrun - 1], a->runs_csv != NULL);
            gp_metrics_record_fairshare(runs[nrun - 1],
                                        a->fairshare_csv != NULL);
            gp_metrics_explain(runs[nrun - 1], a->explain);
            rc = gp_sim_run(&wl, cluster, &cfg, runs[nrun - 1], now_s, &diag);
            if (rc != GP_OK) {
                fprintf(stderr, "gpupool: %s: %s\n", pols[i]->name,
                        gp_diag_format(&diag, rc, buf, sizeof(buf)));
                goto out;
            }
            if (a->jobs_csv &&
                write_csv(a->jobs_csv, pols[i]->name, npol > 1, runs[nrun - 1],
                          gp_metrics_write_jobs_csv) != 0)
                goto out;
            if (a->runs_csv &&
                write_csv(a->runs_csv, pols[i]->name, npol > 1, runs[nrun - 1],
                          gp_metrics_write_runs_csv) != 0)
                goto out;
            if (a->fairshare_csv &&
                write_csv(a->fairshare_csv, pols[i]->name, npol > 1,
                          runs[nrun - 1], gp_metrics_write_fairshare_csv) != 0)
                goto out;
        }
    if (a->summary_csv &&
        write_summary(a->summary_csv, runs, nrun, a->with_wall) != 0)
        goto out;
    if (a->json) {
        if (gp_output_json(stdout, runs, nrun, nrun > 1, a->with_wall) != 0)
            goto out;
    } else if (!a->quiet) {
        if (a->demo)
            printf("gpupool demo: %zu Philly jobs (%s) on %s, 15 virtual "
                   "clusters as tenants, placement %s, restart cost %.0f s\n\n",
                   wl.n, "Sept.-Dec. 2017", cluster_spec,
                   gp_place_model_name(model), a->restart_cost_s);
        gp_output_table(stdout, runs, nrun, a->with_wall);
    }
    if (a->report) {
        struct gp_report_info info = {
            .title = a->demo ? "gpupool demo: the Philly trace" : "gpupool sim",
            .trace = a->trace ? a->trace : "philly.csv.xz (bundled)",
            .cluster = cluster_spec,
            .command = cmdline,
        };
        if ((rc = gp_report_write(a->report, runs, nrun, &info, &diag))) {
            fprintf(stderr, "gpupool: --report: %s\n",
                    gp_diag_format(&diag, rc, buf, sizeof(buf)));
            goto out;
        }
        if (!a->json && !keep)
            printf("\nreport: %s/index.html\n", a->report);
    }
    if (a->with_wall && !a->json && !a->quiet)
        printf("total wall time %.2f s\n", now_s() - t0);
    status = 0;
    for (size_t i = 0; i < nrun; i++) {
        const struct gp_summary *s = gp_metrics_summary(runs[i]);

        if (s->jobs == 0 || s->rejected < s->jobs)
            continue;
        fprintf(stderr,
                "gpupool: every job of the trace was rejected by %s: "
                "%llu larger than the cluster (the largest asks for %llu "
                "GPUs; the cluster has %llu), %llu of a GPU type it lacks, "
                "%llu by the policy, %llu for another reason; e.g. %s\n",
                s->policy, (unsigned long long)s->rejected_too_large,
                (unsigned long long)s->largest_rejected_gpus,
                (unsigned long long)s->cluster_gpus,
                (unsigned long long)s->rejected_gpu_type,
                (unsigned long long)s->rejected_policy,
                (unsigned long long)s->rejected_other, s->rejected_example);
        status = 1;
        break;
    }
    /* gpupool compare keeps the runs for its own table */
    if (keep && status == 0) {
        for (size_t i = 0; i < nrun; i++) {
            if (keep->n == GP__SIM_KEEP_MAX) {
                fprintf(stderr, "gpupool compare: at most %d runs\n",
                        GP__SIM_KEEP_MAX);
                status = 2;
                break;
            }
            keep->runs[keep->n++] = runs[i];
            runs[i] = NULL;
        }
        snprintf(keep->command, sizeof(keep->command), "%s", cmdline);
    }
out:
    for (size_t i = 0; i < nrun; i++)
        gp_metrics_free(runs[i]);
    gp_node_events_fini(&nev);
    gp_speed_table_free(speeds);
    gp_goodput_free(goodput);
    gp_trace_close(trace);
    gp_workload_fini(&wl);
    gp_tenant_list_fini(&tl);
    free(scaled);
    if (fflush(stdout) != 0 && status == 0) {
        fprintf(stderr, "gpupool: writing the output failed\n");
        status = 1;
    }
    return status;
}

static void defaults(struct sim_args *a, char *policies)
{
    memset(a, 0, sizeof(*a));
    a->policies = policies;
    a->restart_cost_s = 30;
    a->seed = 1;
    a->progress = true;
    a->with_wall = true;
    a->grace_s = -1;
    for (int k = 0; k < GP_NPRIO; k++) {
        a->min_run_s[k] = -1;               /* the policy's default */
        a->max_preemptions[k] = UINT32_MAX; /* likewise */
    }
    a->ckpt_cost_s = 30;
    a->half_life_s = 86400;
    a->elastic = GP_ELASTIC_NONE; /* a trace's elastic ranges only when asked */
    a->resize_cost_s = -1;        /* the restart cost */
}

int gp_cmd_sim(int argc, char **argv)
{
    return gp__sim_keep_runs(argc, argv, NULL);
}

int gp__sim_keep_runs(int argc, char **argv, struct gp__sim_keep *keep)
{
    char policies[] = "fifo";
    struct sim_args a;
    int rc;

    defaults(&a, policies);
    if ((rc = parse_args(argc, argv, &a)) != 0)
        return rc == 1 ? 0 : rc;
    return run_sim(&a, argc, argv, keep);
}

int gp_cmd_demo(int argc, char **argv)
{
    char policies[] = "fifo,fifo-backfill,sjf,las,static-quota,pool";
    struct sim_args a;
    int rc;

    defaults(&a, policies);
    a.demo = true;
    a.ckpt = GP_CKPT_ALL;
    a.cluster = "64x8";
    a.report = "gpupool-report";
    if ((rc = parse_args(argc, argv, &a)) != 0)
        return rc == 1 ? 0 : rc;
    return run_sim(&a, argc, argv, NULL);
}
