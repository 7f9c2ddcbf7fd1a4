/* The --precision help of the training and benchmark commands, from the devices built in. */
#include "cli/tuning_flags.h"

#include <stdio.h>
#include <string.h>

#include "nn/device.h"
#include "nn/precision.h"

/* What each policy does, for the help line (a policy without a note is listed by name). */
static const char *note(const char *name)
{
    static const struct {
        const char *name, *note;
    } NOTES[] = {{"fp32", " (default)"}, {"bf16", " (convs in bf16)"}, {"bf16-o2", " (+ bf16 activations)"},
                 {"fp16", " (convs in fp16, dynamic loss scale)"}};
    for (size_t i = 0; i < sizeof NOTES / sizeof NOTES[0]; i++)
        if (!strcmp(NOTES[i].name, name)) return NOTES[i].note;
    return "";
}

/* Whether any device built in runs pol (its supports op). */
static int runs_somewhere(const rn_policy *pol)
{
    char names[256];
    snprintf(names, sizeof names, "%s", rn_device_names());
    int ok = 0;
    char *save = NULL;
    for (char *n = strtok_r(names, " ", &save); n && !ok; n = strtok_r(NULL, " ", &save))
        ok = !rn_policy_check_device(pol, n, NULL);
    return ok;
}

void rn_cli_precision_help(char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int id = 0; id < RN_PREC_COUNT; id++) {
        const rn_policy *pol = rn_policy_get((rn_precision)id);
        if (!runs_somewhere(pol)) continue;
        int n = snprintf(buf + used, len - used, "%s%s%s", used ? " | " : "", pol->name, note(pol->name));
        if (n < 0 || (size_t)n >= len - used) return;
        used += (size_t)n;
    }
}
