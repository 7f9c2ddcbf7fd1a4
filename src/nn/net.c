/* The registry of networks (nn/net.h): the one place that names each net's description. */
#include "nn/net.h"

#include <stdio.h>
#include <string.h>

typedef const rn_net *(*net_fn)(void);

static const net_fn NETS[] = {rn_net_rootnet};
enum { NNETS = (int)(sizeof NETS / sizeof NETS[0]) };

const rn_net *rn_net_default(void) { return rn_net_rootnet(); }

const char *rn_net_names(char *buf, size_t n, int titles)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < NNETS && at < n; i++) {
        int w = snprintf(buf + at, n - at, "%s%s", i ? " or " : "", titles ? NETS[i]()->title : NETS[i]()->name);
        at += w > 0 ? (size_t)w : 0;
    }
    return buf;
}

const rn_head_layer *rn_net_layer(const rn_net *net, rn_head_kind kind)
{
    for (int i = 0; i < net->nhead; i++)
        if (net->head[i].kind == kind) return &net->head[i];
    return NULL;
}

const rn_net *rn_net_guess(int (*has)(const char *name, void *ctx), void *ctx)
{
    for (int i = 0; i < NNETS; i++) {
        const rn_net *net = NETS[i]();
        char name[128];
        snprintf(name, sizeof name, "%s.weight", net->head[0].param);
        if (has(name, ctx)) return net;
    }
    return NULL;
}
