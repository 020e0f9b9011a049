/* cmd_share.c - `gpupool share`: replay the openb trace's pods on its own
 * node list under round-up, best-fit and FGD, side by side (issue 7).
 * The numbers come from src/sim/share.c; this file parses options and
 * prints, so that a test can drive the same replay without the CLI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "gpupool/share.h"

#define OPENB_DIR "../shared/traces/alibaba-gpu-v2023-openb/csv/"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: gpupool share [--nodes FILE] [--pods FILE] [--mode LIST]\n"
            "                     [--no-deletions] [--samples N] [--csv FILE]"
            " [--json]\n"
            "  --nodes FILE   node list (default " OPENB_DIR
            "openb_node_list_gpu_node.csv)\n"
            "  --pods FILE    pod list (default " OPENB_DIR
            "openb_pod_list_default.csv)\n"
            "  --mode LIST    comma-separated: round-up,best-fit,fgd "
            "(default all)\n"
            "  --no-deletions pods never end: fill the cluster\n"
            "  --samples N    series points over the creation span "
            "(default 100: every 1%%)\n"
            "  --csv FILE     write the series: t_s,mode,alloc_rate,"
            "asked_rate,frag_gpus,frag_pct,running\n"
            "  --json         print JSON instead of a table\n");
}

static int parse_modes(const char *list, enum gp_share_mode *modes, int *n)
{
    char buf[256];

    snprintf(buf, sizeof(buf), "%s", list);
    *n = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (*n == GP_SHARE_NMODES ||
            gp_share_mode_parse(tok, &modes[*n]) != GP_OK) {
            fprintf(stderr,
                    "gpupool share: bad mode '%s' (round-up, "
                    "best-fit, fgd)\n",
                    tok);
            return -1;
        }
        (*n)++;
    }
    return *n ? 0 : -1;
}

static void print_table(const struct gp_share_result *r, int n, bool fill)
{
    printf("%-34s", "");
    for (int i = 0; i < n; i++)
        printf(" %12s", gp_share_mode_name(r[i].mode));
    printf("\n");
#define ROW(label, fmt, expr)                                                  \
    do {                                                                       \
        printf("%-34s", label);                                                \
        for (int i = 0; i < n; i++)                                            \
            printf(" %12" fmt, expr);                                          \
        printf("\n");                                                          \
    } while (0)
    ROW("pods", "zu", r[i].pods);
    ROW("placed", "zu", r[i].placed);
    ROW("could not be placed", "zu", r[i].failed);
    ROW("  fractional", "zu", r[i].failed_frac);
    ROW("  whole-GPU", "zu", r[i].failed_whole);
    ROW("  CPU-only", "zu", r[i].failed_cpu);
    ROW("GPU alloc rate, mean %", ".2f", 100 * r[i].alloc_avg);
    ROW("GPU alloc rate, end %", ".2f", 100 * r[i].alloc_end);
    ROW("GPU alloc rate, peak %", ".2f", 100 * r[i].alloc_peak);
    ROW("GPU asked by placed pods, mean %", ".2f", 100 * r[i].asked_avg);
    ROW("GPU asked by placed pods, end %", ".2f", 100 * r[i].asked_end);
    if (fill) {
        ROW("alloc rate at 1st failure %", ".2f", 100 * r[i].alloc_first_fail);
        ROW("pods before 1st failure", "zu", r[i].pods_before_fail);
    }
    ROW("fragmentation, mean GPUs", ".1f", r[i].frag_avg_milli / 1000);
    ROW("fragmentation, mean % of idle", ".2f", r[i].frag_avg_pct);
    ROW("fragmentation, end GPUs", ".1f", r[i].frag_end_milli / 1000);
    ROW("fragmentation, end % of idle", ".2f", r[i].frag_end_pct);
    ROW("wall time s", ".3f", r[i].wall_s);
#undef ROW
    printf("nodes: %u with GPUs (%.0f GPUs), %u CPU-only left out\n",
           r[0].nodes, r[0].total_milli / 1000.0, r[0].nodes_skipped);
}

static void print_json(const struct gp_share_result *r, int n, bool fill)
{
    printf("{\"nodes\": %u, \"nodes_skipped\": %u, \"gpus\": %.0f, "
           "\"no_deletions\": %s, \"modes\": [",
           r[0].nodes, r[0].nodes_skipped, r[0].total_milli / 1000.0,
           fill ? "true" : "false");
    for (int i = 0; i < n; i++)
        printf("%s\n {\"mode\": \"%s\", \"pods\": %zu, \"placed\": %zu, "
               "\"failed\": %zu, \"failed_fractional\": %zu, "
               "\"failed_whole\": %zu, \"failed_cpu_only\": %zu, "
               "\"alloc_rate_mean\": %.6f, \"alloc_rate_end\": %.6f, "
               "\"alloc_rate_peak\": %.6f, \"asked_rate_mean\": %.6f, "
               "\"asked_rate_end\": %.6f, \"alloc_rate_first_failure\": "
               "%.6f, \"pods_before_first_failure\": %zu, "
               "\"frag_gpus_mean\": %.3f, \"frag_pct_mean\": %.4f, "
               "\"frag_gpus_end\": %.3f, \"frag_pct_end\": %.4f, "
               "\"wall_s\": %.4f}",
               i ? "," : "", gp_share_mode_name(r[i].mode), r[i].pods,
               r[i].placed, r[i].failed, r[i].failed_frac, r[i].failed_whole,
               r[i].failed_cpu, r[i].alloc_avg, r[i].alloc_end, r[i].alloc_peak,
               r[i].asked_avg, r[i].asked_end, r[i].alloc_first_fail,
               r[i].pods_before_fail, r[i].frag_avg_milli / 1000,
               r[i].frag_avg_pct, r[i].frag_end_milli / 1000, r[i].frag_end_pct,
               r[i].wall_s);
    printf("\n]}\n");
}

static int write_csv(const char *path, const struct gp_share_result *r, int n)
{
    FILE *f = fopen(path, "w");

    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "t_s,mode,alloc_rate,asked_rate,frag_gpus,frag_pct,running\n");
    for (int i = 0; i < n; i++)
        for (size_t k = 0; k < r[i].nseries; k++) {
            const struct gp_share_sample *s = &r[i].series[k];
            double pct =
                s->idle_milli > 0 ? 100 * s->frag_milli / s->idle_milli : 0;

            fprintf(f, "%.0f,%s,%.6f,%.6f,%.3f,%.4f,%u\n", s->t_s,
                    gp_share_mode_name(r[i].mode), s->alloc_rate, s->asked_rate,
                    s->frag_milli / 1000, pct, s->running);
        }
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}

int gp_cmd_share(int argc, char **argv)
{
    const char *nodes = OPENB_DIR "openb_node_list_gpu_node.csv";
    const char *pods = OPENB_DIR "openb_pod_list_default.csv";
    const char *csv = NULL;
    enum gp_share_mode modes[GP_SHARE_NMODES] = {GP_SHARE_ROUNDUP,
                                                 GP_SHARE_BEST, GP_SHARE_FRAG};
    int nmodes = GP_SHARE_NMODES, nrun = 0, status = 1;
    struct gp_share_opts opts = {0};
    struct gp_share_trace t = {0};
    struct gp_share_result res[GP_SHARE_NMODES];
    struct gp_diag diag = {0};
    bool json = false;
    char msg[512];
    int rc;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool has = i + 1 < argc;

        if (!strcmp(a, "--nodes") && has)
            nodes = argv[++i];
        else if (!strcmp(a, "--pods") && has)
            pods = argv[++i];
        else if (!strcmp(a, "--csv") && has)
            csv = argv[++i];
        else if (!strcmp(a, "--mode") && has) {
            if (parse_modes(argv[++i], modes, &nmodes) != 0)
                return 2;
        } else if (!strcmp(a, "--samples") && has) {
            char *end;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1000000) {
                fprintf(stderr, "gpupool share: --samples 1..1000000\n");
                return 2;
            }
            opts.samples = (uint32_t)v;
        } else if (!strcmp(a, "--no-deletions"))
            opts.no_deletions = true;
        else if (!strcmp(a, "--json"))
            json = true;
        else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if ((rc = gp_share_read_nodes(&t, nodes, &diag)) != GP_OK ||
        (rc = gp_share_read_pods(&t, pods, &diag)) != GP_OK) {
        fprintf(stderr, "gpupool share: %s\n",
                gp_diag_format(&diag, rc, msg, sizeof(msg)));
        if (rc == GP_EIO)
            fprintf(stderr, "(give the openb CSVs with --nodes and --pods)\n");
        goto out;
    }
    for (; nrun < nmodes; nrun++) {
        opts.mode = modes[nrun];
        if ((rc = gp_share_run(&t, &opts, &res[nrun], &diag)) != GP_OK) {
            fprintf(stderr, "gpupool share: %s: %s\n",
                    gp_share_mode_name(modes[nrun]),
                    gp_diag_format(&diag, rc, msg, sizeof(msg)));
            goto out;
        }
    }
    if (json)
        print_json(res, nrun, opts.no_deletions);
    else
        print_table(res, nrun, opts.no_deletions);
    status = csv && write_csv(csv, res, nrun) != 0 ? 1 : 0;
out:
    for (int i = 0; i < nrun; i++)
        gp_share_result_fini(&res[i]);
    gp_share_trace_fini(&t);
    return status;
}
