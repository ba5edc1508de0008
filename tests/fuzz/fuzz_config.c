/*  libFuzzer harness: a configuration file, loaded with fasgd-server's
    table of keys through fasgd_config_load_all, the entry point of
    `fasgd-server -c FILE` and `-n` (defaults, then the file). The bytes
    are a memory file with a path, so the loader reads it as it reads any
    file.

    Invariants besides memory safety and bounded time: the error count is
    never negative, and a file that loads without an error dumps as YAML
    that loads back without an error.  */
#include "fuzz_util.h"

#include "server.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
    static fasgd_server_cfg_t cfg, again;
    static FILE *devnull;
    if (!devnull && !(devnull = fopen ("/dev/null", "w")))
        return 0;
    char path [64];
    int fd = fuzz_memfile (data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    /*  Messages are formatted (a format bug shows), then dropped.  */
    int errors = fasgd_config_load_all (fasgd_server_cfg_keys, &cfg, path, NULL, 0, devnull);
    close (fd);
    if (errors < 0)
        __builtin_trap ();
    if (errors > 0)
        return 0;
    char *dump = NULL;
    size_t dumplen = 0;
    FILE *out = open_memstream (&dump, &dumplen);
    if (!out)
        return 0;
    fasgd_config_dump (fasgd_server_cfg_keys, &cfg, out);
    fclose (out);
    if (fasgd_config_defaults (fasgd_server_cfg_keys, &again, devnull) != 0
        || fasgd_config_load_string (fasgd_server_cfg_keys, &again, "dump", dump, devnull) != 0)
        __builtin_trap ();
    free (dump);
    return 0;
}
