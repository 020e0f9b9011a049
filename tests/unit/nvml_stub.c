/* nvml_stub.c - a stand-in for libnvidia-ml.so.1, built only for the
 * monitor's tests, which point GPUPOOL_NVML_LIB at it.
 *
 * Its types are declared here again, from NVIDIA's NVML reference, and not
 * shared with src/monitor/nvml.c: a layout mistake there then shows up as a
 * failing test instead of being repeated on both sides.
 *
 * Behaviour comes from the environment, read at each call so a test can
 * change it while a monitor is open:
 *   NVML_STUB_GPUS=N            devices (default 2)
 *   NVML_STUB_NAMES=a;b         device names, cycled (default
 *                               "NVIDIA A100-SXM4-40GB")
 *   NVML_STUB_FAIL=init|count|handle|name|uuid
 *                               that call fails: init with "Driver Not
 *                               Loaded", the others with "Unknown Error"
 *   NVML_STUB_UNSUPPORTED=util,memory,temp,power,procs,mig
 *                               those calls answer "Not Supported"
 *   NVML_STUB_LOST=i            device i answers "GPU is lost" when sampled
 *   NVML_STUB_PROCS=N           compute processes per device (pids
 *                               4000 + 100 * device + k)
 *   NVML_STUB_PROC_STRIDE=16|24|32
 *                               bytes per process entry written (default:
 *                               the documented size of the function)
 *   NVML_STUB_MIG=i             device i has MIG mode on
 *   NVML_STUB_THREAD=1          nvmlInit_v2 starts a thread of its own, as
 *                               a real driver's library does (it waits
 *                               until the last nvmlShutdown joins it), so
 *                               a caller's signal mask is tested as in
 *                               production
 * Built with -DNVML_STUB_OLD it is an old driver: only the plain
 * nvmlDeviceGetComputeRunningProcesses and no nvmlDeviceGetMigMode.
 *
 * nvml_stub_live() (not NVML) says how many nvmlInit_v2 calls have not yet
 * been matched by nvmlShutdown.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9
#define NVML_ERROR_GPU_IS_LOST 15
#define NVML_ERROR_UNKNOWN 999

#define MAX_DEVICES 64

struct nvmlDevice_st {
    unsigned int index;
};

struct stub_memory { /* nvmlMemory_t */
    unsigned long long total, free, used;
};

struct stub_utilization { /* nvmlUtilization_t */
    unsigned int gpu, memory;
};

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int result);
int nvmlDeviceGetCount_v2(unsigned int *count);
int nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                  struct nvmlDevice_st **device);
int nvmlDeviceGetName(struct nvmlDevice_st *device, char *name,
                      unsigned int length);
int nvmlDeviceGetUUID(struct nvmlDevice_st *device, char *uuid,
                      unsigned int length);
int nvmlDeviceGetMemoryInfo(struct nvmlDevice_st *device,
                            struct stub_memory *memory);
int nvmlDeviceGetUtilizationRates(struct nvmlDevice_st *device,
                                  struct stub_utilization *utilization);
int nvmlDeviceGetTemperature(struct nvmlDevice_st *device, int sensorType,
                             unsigned int *temp);
int nvmlDeviceGetPowerUsage(struct nvmlDevice_st *device, unsigned int *power);
int nvmlDeviceGetComputeRunningProcesses(struct nvmlDevice_st *device,
                                         unsigned int *infoCount, void *infos);
#ifndef NVML_STUB_OLD
int nvmlDeviceGetComputeRunningProcesses_v2(struct nvmlDevice_st *device,
                                            unsigned int *infoCount,
                                            void *infos);
int nvmlDeviceGetComputeRunningProcesses_v3(struct nvmlDevice_st *device,
                                            unsigned int *infoCount,
                                            void *infos);
int nvmlDeviceGetMigMode(struct nvmlDevice_st *device,
                         unsigned int *currentMode, unsigned int *pendingMode);
#endif
int nvml_stub_live(void);

static struct nvmlDevice_st devices[MAX_DEVICES];
static int live;

static int env_int(const char *name, int dflt)
{
    const char *s = getenv(name);

    return s && *s ? atoi(s) : dflt;
}

static int ndevices(void)
{
    int n = env_int("NVML_STUB_GPUS", 2);

    return n < 0 ? 0 : n > MAX_DEVICES ? MAX_DEVICES : n;
}

static int fails(const char *call)
{
    const char *s = getenv("NVML_STUB_FAIL");

    return s && strcmp(s, call) == 0;
}

/* call is one of the comma-separated words of NVML_STUB_UNSUPPORTED. */
static int unsupported(const char *call)
{
    const char *s = getenv("NVML_STUB_UNSUPPORTED");
    size_t n = strlen(call);

    while (s && *s) {
        if (strncmp(s, call, n) == 0 && (s[n] == ',' || s[n] == '\0'))
            return 1;
        s = strchr(s, ',');
        if (s)
            s++;
    }
    return 0;
}

/* NVML_SUCCESS, or why device cannot answer a sampling call. */
static int check(const struct nvmlDevice_st *d, const char *call)
{
    if (!live)
        return NVML_ERROR_UNINITIALIZED;
    if (!d)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (env_int("NVML_STUB_LOST", -1) == (int)d->index)
        return NVML_ERROR_GPU_IS_LOST;
    if (call && unsupported(call))
        return NVML_ERROR_NOT_SUPPORTED;
    return NVML_SUCCESS;
}

/* NVML_STUB_THREAD: the thread waits for the pipe to close */
static pthread_t helper;
static int helper_pipe[2] = {-1, -1};

static void *helper_main(void *arg)
{
    char c;

    (void)arg;
    while (read(helper_pipe[0], &c, 1) != 0)
        ;
    return NULL;
}

int nvmlInit_v2(void)
{
    const char *t = getenv("NVML_STUB_THREAD");

    if (fails("init"))
        return NVML_ERROR_DRIVER_NOT_LOADED;
    for (unsigned i = 0; i < MAX_DEVICES; i++)
        devices[i].index = i;
    if (!live && t && *t == '1' && helper_pipe[0] < 0) {
        if (pipe(helper_pipe) != 0)
            return NVML_ERROR_UNKNOWN;
        if (pthread_create(&helper, NULL, helper_main, NULL) != 0) {
            close(helper_pipe[0]);
            close(helper_pipe[1]);
            helper_pipe[0] = helper_pipe[1] = -1;
            return NVML_ERROR_UNKNOWN;
        }
    }
    live++;
    return NVML_SUCCESS;
}

int nvmlShutdown(void)
{
    if (!live)
        return NVML_ERROR_UNINITIALIZED;
    if (--live == 0 && helper_pipe[0] >= 0) {
        close(helper_pipe[1]);
        pthread_join(helper, NULL);
        close(helper_pipe[0]);
        helper_pipe[0] = helper_pipe[1] = -1;
    }
    return NVML_SUCCESS;
}

int nvml_stub_live(void)
{
    return live;
}

const char *nvmlErrorString(int result)
{
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_GPU_IS_LOST:
        return "GPU is lost";
    default:
        return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned int *count)
{
    if (!live)
        return NVML_ERROR_UNINITIALIZED;
    if (fails("count"))
        return NVML_ERROR_UNKNOWN;
    *count = (unsigned)ndevices();
    return NVML_SUCCESS;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                  struct nvmlDevice_st **device)
{
    if (!live)
        return NVML_ERROR_UNINITIALIZED;
    if (index >= (unsigned)ndevices() || !device)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (fails("handle"))
        return NVML_ERROR_UNKNOWN;
    *device = &devices[index];
    return NVML_SUCCESS;
}

/* The index-th name of the ';'-separated list, cycled, into out. */
static void device_name(unsigned index, char *out, size_t len)
{
    const char *s = getenv("NVML_STUB_NAMES");
    const char *start, *end;
    unsigned n = 1, k;
    size_t w;

    if (!s || !*s)
        s = "NVIDIA A100-SXM4-40GB";
    for (const char *p = s; *p; p++)
        n += *p == ';';
    start = s;
    for (k = index % n; k > 0; k--)
        start = strchr(start, ';') + 1;
    end = strchr(start, ';');
    w = end ? (size_t)(end - start) : strlen(start);
    if (w >= len)
        w = len - 1;
    memcpy(out, start, w);
    out[w] = '\0';
}

static int copy_out(const char *s, char *out, unsigned int length)
{
    size_t n = strlen(s);

    if (!out || length < n + 1)
        return NVML_ERROR_INSUFFICIENT_SIZE;
    memcpy(out, s, n + 1);
    return NVML_SUCCESS;
}

int nvmlDeviceGetName(struct nvmlDevice_st *device, char *name,
                      unsigned int length)
{
    char buf[96];
    int rc = check(device, NULL);

    if (rc == NVML_SUCCESS && fails("name"))
        rc = NVML_ERROR_UNKNOWN;
    if (rc != NVML_SUCCESS)
        return rc;
    device_name(device->index, buf, sizeof(buf));
    return copy_out(buf, name, length);
}

int nvmlDeviceGetUUID(struct nvmlDevice_st *device, char *uuid,
                      unsigned int length)
{
    char buf[96];
    int rc = check(device, NULL);
    unsigned i;

    if (rc == NVML_SUCCESS && fails("uuid"))
        rc = NVML_ERROR_UNKNOWN;
    if (rc != NVML_SUCCESS)
        return rc;
    i = device->index;
    strcpy(buf, "GPU-57ab0000-0000-0000-0000-000000000000");
    buf[strlen(buf) - 2] = (char)('0' + i / 10 % 10);
    buf[strlen(buf) - 1] = (char)('0' + i % 10);
    return copy_out(buf, uuid, length);
}

int nvmlDeviceGetMemoryInfo(struct nvmlDevice_st *device,
                            struct stub_memory *memory)
{
    int rc = check(device, "memory");
    const unsigned long long mib = 1ull << 20;

    if (rc != NVML_SUCCESS)
        return rc;
    memory->total = 40960 * mib;
    memory->used = 1024 * mib * (device->index + 1) + 12345;
    memory->free = memory->total - memory->used;
    return NVML_SUCCESS;
}

int nvmlDeviceGetUtilizationRates(struct nvmlDevice_st *device,
                                  struct stub_utilization *utilization)
{
    int rc = check(device, "util");

    if (rc != NVML_SUCCESS)
        return rc;
    utilization->gpu = 10 * (device->index + 1);
    utilization->memory = 5;
    return NVML_SUCCESS;
}

int nvmlDeviceGetTemperature(struct nvmlDevice_st *device, int sensorType,
                             unsigned int *temp)
{
    int rc = check(device, "temp");

    if (rc != NVML_SUCCESS)
        return rc;
    if (sensorType != 0) /* NVML_TEMPERATURE_GPU */
        return NVML_ERROR_INVALID_ARGUMENT;
    *temp = 30 + device->index;
    return NVML_SUCCESS;
}

int nvmlDeviceGetPowerUsage(struct nvmlDevice_st *device, unsigned int *power)
{
    int rc = check(device, "power");

    if (rc != NVML_SUCCESS)
        return rc;
    *power = 250500 + 1000 * device->index; /* milliwatts */
    return NVML_SUCCESS;
}

/* Entries as a driver lays them out: pid (u32) at 0, usedGpuMemory (u64)
 * at 8, gpuInstanceId and computeInstanceId (u32) at 16 and 20,
 * usedGpuCcProtectedMemory (u64) at 24; the first stride bytes of each. */
static int processes(struct nvmlDevice_st *device, unsigned int *infoCount,
                     void *infos, int stride_doc)
{
    int rc = check(device, "procs");
    int n = env_int("NVML_STUB_PROCS", 0);
    int stride = env_int("NVML_STUB_PROC_STRIDE", stride_doc);
    unsigned char *out = infos;

    if (rc != NVML_SUCCESS)
        return rc;
    if (!infoCount || (stride != 16 && stride != 24 && stride != 32))
        return NVML_ERROR_INVALID_ARGUMENT;
    if (*infoCount < (unsigned)n) {
        *infoCount = (unsigned)n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (int k = 0; k < n; k++) {
        unsigned char e[32];
        uint32_t pid = 4000 + 100 * device->index + (uint32_t)k;
        uint64_t used = (uint64_t)(k + 1) << 20, cc = 0;
        uint32_t none = 0xffffffffu;

        memset(e, 0, sizeof(e));
        memcpy(e, &pid, 4);
        memcpy(e + 8, &used, 8);
        memcpy(e + 16, &none, 4);
        memcpy(e + 20, &none, 4);
        memcpy(e + 24, &cc, 8);
        memcpy(out + (size_t)k * (size_t)stride, e, (size_t)stride);
    }
    *infoCount = (unsigned)n;
    return NVML_SUCCESS;
}

int nvmlDeviceGetComputeRunningProcesses(struct nvmlDevice_st *device,
                                         unsigned int *infoCount, void *infos)
{
    return processes(device, infoCount, infos, 16);
}

#ifndef NVML_STUB_OLD
int nvmlDeviceGetComputeRunningProcesses_v2(struct nvmlDevice_st *device,
                                            unsigned int *infoCount,
                                            void *infos)
{
    return processes(device, infoCount, infos, 24);
}

int nvmlDeviceGetComputeRunningProcesses_v3(struct nvmlDevice_st *device,
                                            unsigned int *infoCount,
                                            void *infos)
{
    return processes(device, infoCount, infos, 24);
}

int nvmlDeviceGetMigMode(struct nvmlDevice_st *device,
                         unsigned int *currentMode, unsigned int *pendingMode)
{
    int rc = check(device, "mig");

    if (rc != NVML_SUCCESS)
        return rc;
    *currentMode = env_int("NVML_STUB_MIG", -1) == (int)device->index;
    *pendingMode = *currentMode;
    return NVML_SUCCESS;
}
#endif
