/* main.c - the gpupool command: a table of subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "gpupool/core.h"
#include "gpupool/policies.h"
#include "gpupool/trace.h"
#include "sim/version.h" /* generated: GP_VERSION */

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct gp_cmd commands[] = {
    {"demo", "replay the bundled Philly trace under several policies",
     gp_cmd_demo},
    {"sim", "replay a trace through a policy on a simulated cluster",
     gp_cmd_sim},
    {"compare", "run policies over several traces: one table, CSV, report",
     gp_cmd_compare},
    {"share", "replay openb pods: round-up vs best-fit vs FGD", gp_cmd_share},
    {"serve", "run the daemon: real jobs on this host's GPUs", gp_cmd_serve},
    {"submit", "queue a job on the daemon (like sbatch)", gp_cmd_submit},
    {"queue", "jobs waiting and running, with reasons (like squeue)",
     gp_cmd_queue},
    {"show", "everything about one job (like scontrol show job)", gp_cmd_show},
    {"why", "why a job waits and when it should start", gp_cmd_why},
    {"cancel", "cancel jobs (like scancel)", gp_cmd_cancel},
    {"history", "jobs that ended (like sacct)", gp_cmd_history},
    {"tenants", "each tenant's guarantee, share, holdings (the ledger)",
     gp_cmd_tenants},
    {"nodes", "the nodes and what each GPU is doing (like sinfo)",
     gp_cmd_nodes},
    {"ledger", "the pool's books: entitled, held, borrowed, owed",
     gp_cmd_ledger},
    {"top", "a live view of the GPUs, the ledger and the queue", gp_cmd_top},
    {"token",
     "make an API token for the daemon (its hash for the tokens "
     "file)",
     gp_cmd_token},
    {"policies", "list the scheduling policies", gp_cmd_policies},
    {"formats", "list the trace formats gpupool reads", gp_cmd_formats},
    {"presets", "list the named cluster presets", gp_cmd_presets},
    {"version", "print the version", cmd_version},
    {"help", "show this help", cmd_help},
};

#define NCMDS (sizeof(commands) / sizeof(commands[0]))

/* `gpupool help` and `gpupool help COMMAND` (that command's --help). */
static int cmd_help(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "gpupool help: one command at most; see `gpupool "
                        "help`\n");
        return 2;
    }
    if (argc == 2) {
        char help[] = "--help";

        for (size_t i = 0; i < NCMDS; i++)
            if (strcmp(argv[1], commands[i].name) == 0 &&
                commands[i].run != cmd_help) {
                char *args[] = {argv[1], help, NULL};

                return commands[i].run(2, args);
            }
        if (strcmp(argv[1], "help") != 0) {
            fprintf(stderr,
                    "gpupool help: unknown command '%s'; see `gpupool "
                    "help`\n",
                    argv[1]);
            return 2;
        }
    }
    printf("usage: gpupool <command> [options]\n\n"
           "gpupool allocates the GPUs of shared clusters to ML training "
           "jobs.\n\ncommands:\n");
    for (size_t i = 0; i < NCMDS; i++)
        printf("  %-10s %s\n", commands[i].name, commands[i].summary);
    printf("\n'gpupool <command> --help' tells more about a command.\n");
    return 0;
}

static int cmd_version(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    printf("gpupool %s\n", GP_VERSION);
    return 0;
}

int gp_cmd_policies(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    const struct gp_policy_ops *p;

    for (size_t i = 0; (p = gp_policy_at(i)); i++)
        printf("%-14s %s%s\n", p->name, p->summary,
               p->preemptive ? " [preemptive]" : "");
    return 0;
}

int gp_cmd_formats(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (size_t i = 0; gp_trace_formats[i].name; i++)
        printf("%-14s %s\n", gp_trace_formats[i].name,
               gp_trace_formats[i].summary);
    return 0;
}

int gp_cmd_presets(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (size_t i = 0; gp_cluster_presets[i].name; i++)
        printf("%-16s %s\n", gp_cluster_presets[i].name,
               gp_cluster_presets[i].summary);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        cmd_help(0, NULL);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
        return cmd_help(0, NULL);
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(0, NULL);
    for (size_t i = 0; i < NCMDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gpupool: unknown command '%s'; see `gpupool help`\n",
            argv[1]);
    return 2;
}
